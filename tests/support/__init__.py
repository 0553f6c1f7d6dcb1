"""Helpers shared by tests that need real processes (a broker, clients)."""
