from django.urls import path

from septet_platform.ops import views

app_name = "ops"
urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("metrics", views.metrics_view, name="metrics"),
    path("ops/", views.ops_page, name="ops"),
]
