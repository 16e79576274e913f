"""Bots and their submitted versions (archive, manifest, qualification status, error log)."""
