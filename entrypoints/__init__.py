"""Edges of callwright: HTTP, CLI and workers. ``bootstrap`` is the only place adapters are chosen."""
