"""The Accounts boundary: sign-up, sessions, API keys, verification and administration."""
