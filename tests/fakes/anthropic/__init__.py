"""A local fake of the Anthropic Messages API for tests (loopback only)."""
