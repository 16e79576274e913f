"""The stable public name of `referee.botkit.protocol.bot_pb2_grpc`, generated from bot.proto."""

from referee.botkit.protocol.bot_pb2_grpc import *  # noqa: F403
