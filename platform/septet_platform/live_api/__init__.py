"""The live adapter: a match's live stream to browsers (server-sent events, served by the ASGI
server without a thread per viewer) and a person's answers from their seat. Thin views over the
`live` domain app; it imports no other adapter (web, arena_api)."""
