"""The filters and sorts of ``GET /v1/calls`` over ``calls_list_v1``, as fixed SQL fragments whose
values only ever travel as parameters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

# Every order ends with the same unique tiebreak, so that offset paging never repeats or skips a call.
SORTS = {
    "created_desc": "created_at DESC, call_id DESC",
    "created_asc": "created_at ASC, call_id ASC",
    "duration_desc": "duration_seconds DESC NULLS LAST, created_at DESC, call_id DESC",
    "duration_asc": "duration_seconds ASC NULLS LAST, created_at DESC, call_id DESC",
    "confidence_desc": "confidence DESC NULLS LAST, created_at DESC, call_id DESC",
    "cost_desc": "cost_total DESC NULLS LAST, created_at DESC, call_id DESC",
}
# Equality filters: the counts tables (view.py) are keyed by exactly these (and the UTC day).
COUNTED_FILTERS = ("status", "mode", "direction", "voice_engine", "has_outcome")

@dataclass(frozen=True, kw_only=True)
class CallFilters:
    status: str | None = None
    mode: str | None = None
    direction: str | None = None
    voice_engine: str | None = None
    start: datetime | None = None  # created_at >= start
    end: datetime | None = None  # created_at < end
    to_prefix: str | None = None
    has_outcome: bool | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    sort: str = "created_desc"

    def __post_init__(self) -> None:
        if self.sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}")


def counted_where(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    """The clauses on columns that the rows and both counts tables share."""
    clauses = ["tenant_id = %(tenant_id)s"]
    params: dict[str, Any] = {"tenant_id": tenant_id}
    for name in COUNTED_FILTERS:
        if getattr(filters, name) is not None:
            clauses.append(f"{name} = %({name})s")
            params[name] = getattr(filters, name)
    return " AND ".join(clauses), params


def where(tenant_id: str, filters: CallFilters) -> tuple[str, dict[str, Any]]:
    where, params = counted_where(tenant_id, filters)
    clauses = [where]
    optional = (
        ("start", "created_at >= %(start)s", utc(filters.start)),
        ("end", "created_at < %(end)s", utc(filters.end)),
        ("to_pattern", "to_number LIKE %(to_pattern)s", prefix_pattern(filters.to_prefix)),
        ("min_confidence", "confidence >= %(min_confidence)s", filters.min_confidence),
        ("max_confidence", "confidence <= %(max_confidence)s", filters.max_confidence),
    )
    for name, clause, value in optional:
        if value is not None:
            clauses.append(clause)
            params[name] = value
    return " AND ".join(clauses), params


def prefix_pattern(prefix: str | None) -> str | None:
    if prefix is None:
        return None
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def utc(moment: datetime | None) -> datetime | None:
    """Timestamps without a zone are read as UTC (the wire is UTC), never as the session's zone."""
    if moment is None:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
