"""The instants a request may name (a list's ``start``/``end``, ``simulation.at``, a suppression's
``expires_at``): far enough inside ``datetime``'s years 1-9999 that converting them to UTC or to a
callee's zone, and the calls list's month and day buckets (a month past a bound), cannot overflow."""

from __future__ import annotations

from datetime import datetime, timezone

EARLIEST = datetime(1, 1, 2, tzinfo=timezone.utc)
LATEST = datetime(9999, 12, 1, tzinfo=timezone.utc)  # exclusive
EARLIEST_TEXT = "0001-01-02T00:00:00Z"
LATEST_TEXT = "9999-12-01T00:00:00Z"
RANGE_CTX = {"ge": EARLIEST_TEXT, "lt": LATEST_TEXT}
RANGE_RULE = f"must be an instant from {EARLIEST_TEXT} up to (not including) {LATEST_TEXT}"


def in_range(moment: datetime) -> bool:
    """Whether ``moment`` (read as UTC without a zone) converts to UTC and lies in [EARLIEST, LATEST)."""
    try:
        utc = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    except OverflowError:
        return False
    return EARLIEST <= utc < LATEST
