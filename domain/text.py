"""The rule of every free-text value the service stores: no NUL (no view can hold it) and no lone
surrogate (not text at all). The HTTP edge applies it to request fields (its ``safe_text``), the
domain to the settings it checks itself."""

from __future__ import annotations


def unsafe_text(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None."""
    if "\x00" in value:
        return "must not contain NUL characters"
    if any("\ud800" <= char <= "\udfff" for char in value):
        return "must not contain lone surrogate code points"
    return None
