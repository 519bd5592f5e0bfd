"""Concrete I/O behind the application's ports. Chosen only by ``entrypoints.bootstrap``."""
