from django.contrib import admin

from septet_platform.accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("user", "name", "prefix", "created", "last_used", "revoked")
    readonly_fields = ("prefix", "digest", "created", "last_used")
