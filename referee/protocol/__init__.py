"""The stable public name of the septet.v1 stubs for bots (`from referee.protocol import bot_pb2`).

The generated stubs live in `referee.botkit.protocol`; `referee.protocol.bot_pb2` and
`referee.protocol.bot_pb2_grpc` re-export them, so bots on plain grpcio keep working whatever the
referee's layout.
"""
