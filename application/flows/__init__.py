"""Flows: drafts, previews and publishing of conversation graphs."""
