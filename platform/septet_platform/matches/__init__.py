"""Matches: one seeded game with a fixed seating, its lifecycle, result and replay."""
