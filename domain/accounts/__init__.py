"""Accounts boundary: tenants, users, API keys, one-time tokens and revoked sessions."""
