from django.urls import path

from septet_platform.live_api import views

app_name = "live"
urlpatterns = [
    path("matches/<int:match_id>/events", views.match_events, name="events"),
    path("matches/<int:match_id>/seats/<int:seat>/answer", views.seat_answer, name="answer"),
]
