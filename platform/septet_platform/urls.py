"""The site's URLs: the admin for organisers, and the pages (septet_platform.web) at the root."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("septet_platform.web.urls")),
]
