"""Shared pytest configuration for the whole suite."""
