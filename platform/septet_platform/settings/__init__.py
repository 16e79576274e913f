"""Settings: `base` holds everything shared; `local`, `dev`, `test` and `prod` adjust it.

`DEFAULT_MODULE` is the one default every entry point shares (the Celery app, `septet up`): a
process whose caller named no settings runs the one-command settings, DEBUG off. It lives here,
in a module that imports nothing, so that whichever of them is imported first, none can put a
different default into the environment and have the others take it for the caller's choice.
"""

DEFAULT_MODULE = "septet_platform.settings.local"
