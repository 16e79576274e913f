"""Tournament pages under /tournaments/."""

from django.urls import path

from septet_platform.tournaments import views

app_name = "tournaments"

urlpatterns = [
    path("", views.tournament_list, name="list"),
    path("<slug:name>/", views.tournament_detail, name="detail"),
    path("<slug:name>/enter/", views.tournament_enter, name="enter"),
    path("<slug:name>/replays.zip", views.tournament_replays, name="replays"),
]
