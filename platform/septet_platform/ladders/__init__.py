"""Ladders (one per game id) and the ratings of bot versions on them, with their history."""
