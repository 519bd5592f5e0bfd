"""Calling boundary: dialing rules, outcome schemas and the call aggregate's policies."""
