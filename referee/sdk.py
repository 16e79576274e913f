"""The stable public name of the bot SDK (`from referee.sdk import Bot, serve`).

The SDK lives in `referee.botkit.sdk`; this module re-exports it, so bots written against
`referee.sdk` keep working whatever the referee's layout.
"""

from referee.botkit.sdk import *  # noqa: F403
