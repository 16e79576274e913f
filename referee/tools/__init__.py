"""The tools: everything around a match that is neither the rules nor a bot.

The `septet` command line (`cli`) and its commands (`check`, `compare`, `series`, `stats`, the
Arena client `arena_cli` and `challenge_cli`), bot folders and lineups (`botfolder`, `lineup`,
`building`, `packing`, `bot_logs`), the sandbox (`sandbox`, `sandbox_cgroups`,
`sandbox_seccomp`), the replay viewer (`viewer`) and the referee's gRPC client for a bot in its own
process (`grpc_player`).
"""
