from django.contrib import admin

from septet_platform.bots.models import Bot, BotVersion


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "is_house", "created")
    search_fields = ("name", "owner__username")


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ("bot", "number", "status", "created", "qualified")
    list_filter = ("status",)
