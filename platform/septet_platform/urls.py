"""The site's URLs: the admin for organisers, health and metrics (septet_platform.ops), live
streams and a person's answers (septet_platform.live_api), and the pages (septet_platform.web)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("septet_platform.ops.urls")),
    path("tournaments/", include("septet_platform.tournaments.urls")),
    path("live/", include("septet_platform.live_api.urls")),
    path("", include("septet_platform.web.urls")),
]
