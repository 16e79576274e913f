"""The site's pages under the `web` namespace."""

from django.urls import include, path

from septet_platform.web import account_views, challenge_views, table_views, views

app_name = "web"

urlpatterns = [
    path("", views.home, name="home"),
    path("ladders/", views.ladders, name="ladders"),
    path("ladders/<slug:game>/", views.ladder, name="ladder"),
    path("ladders/<slug:game>/open/", views.open_ladder, name="ladder-open"),
    path("bots/<path:name>/v<int:number>/status.json", views.version_status, name="version-status"),
    path("bots/<path:name>/", views.bot, name="bot"),
    path("matches/", views.matches, name="matches"),
    path("matches/<int:match_id>/", views.match, name="match"),
    path("matches/<int:match_id>/status.json", views.match_status, name="match-status"),
    path("matches/<int:match_id>/replay.json", views.match_replay, name="match-replay"),
    path("ratings/", views.how_ratings_work, name="ratings"),
    path("docs/", views.guides_index, name="guides"),
    path("docs/<slug:slug>/", views.guide, name="guide"),
    path("rules/", views.rules_index, name="rules-index"),
    path("rules/<slug:game>/", views.rules, name="rules"),
    path("account/sign-up/", account_views.sign_up, name="sign-up"),
    path("account/sign-in/", account_views.SignIn.as_view(), name="sign-in"),
    path("account/sign-out/", account_views.SignOut.as_view(), name="sign-out"),
    path("account/bots/", account_views.my_bots, name="my-bots"),
    path("account/tokens/", account_views.tokens, name="tokens"),
    path("account/tokens/<str:prefix>/revoke/", account_views.token_revoke, name="token-revoke"),
    path("account/self-hosted/", account_views.self_hosted_register, name="self-hosted-register"),
    path("account/self-hosted/<slug:name>/token/", account_views.self_hosted_token, name="self-hosted-token"),
    path("account/bots/<path:name>/open-ladders/", account_views.open_ladders_switch, name="open-ladders"),
    path("account/upload/", account_views.upload, name="upload"),
    path("challenges/", include(challenge_views)),
    path("tables/", include(table_views)),
]
