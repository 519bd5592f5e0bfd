"""The Calling boundary: creating, running, cancelling and reading calls."""
