"""Challenges: the unrated duplicate sets a user asks for against bots they name, within per-user
and per-bot limits, and their results (the site's challenge pages and the Arena's challenge
calls are adapters over these services and selectors)."""
