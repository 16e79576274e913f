"""The stable public name of `referee.botkit.protocol.bot_pb2`, generated from bot.proto."""

from referee.botkit.protocol.bot_pb2 import *  # noqa: F403
