"""The site's URLs: the admin for organisers, health and metrics (septet_platform.ops), and the
pages (septet_platform.web) at the root."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("septet_platform.ops.urls")),
    path("tournaments/", include("septet_platform.tournaments.urls")),
    path("", include("septet_platform.web.urls")),
]
