"""The bot kit: what a bot imports.

The SDK (`sdk`: `Bot`, `serve`, and `connect` for a self-hosted bot, over `answering` and
`connect`) and the septet.v1 protocol (`protocol`: the stubs generated from
protos/septet/v1/*.proto and `convert` between messages and the engine's types), and the search
API (`search`: worlds consistent with a seat's view, rollouts, determinized Monte-Carlo; the
worlds of each game family in `worlds`). It builds on `referee.engine` and imports nothing of
`referee.tools` (the CLI, the sandbox).
"""
