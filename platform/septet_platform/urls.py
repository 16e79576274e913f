"""The site's URLs: the admin for organisers (pages come with the web UI)."""

from django.contrib import admin
from django.urls import path

urlpatterns = [
    path("admin/", admin.site.urls),
]
