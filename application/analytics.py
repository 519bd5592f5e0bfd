"""A report's query from the request's parameters (docs/analytics.md): the default window (the
last 7 days), the default bucket of a series, and every problem of the parameters at once (422)."""

from __future__ import annotations

from datetime import datetime, timezone

from application.errors import ValidationFailedError
from domain.analytics.reports import DEFAULT_WINDOW, FILTERS, REPORTS, ReportQuery, problems
from domain.instants import EARLIEST, EARLIEST_TEXT, RANGE_CTX, RANGE_RULE, in_range


Problem = tuple[list[str | int], str, str, object]


def _invalid(found: list[Problem]) -> ValidationFailedError:
    """Every problem at once; one out of the calendar's range says the range in its ``ctx``."""
    return ValidationFailedError(found, [dict(RANGE_CTX) if code == "datetime_out_of_range" else {}
                                         for _, _, code, _ in found])


def report_query(report: str, tenant_id: str, now: datetime, *, start: datetime | None, end: datetime | None,
                 interval: str | None, group_by: str | None, filters: dict[str, str | None],
                 compare: bool) -> ReportQuery:
    found: list[Problem] = []
    for name, value in (("start", start), ("end", end)):
        if value is not None and value.tzinfo is None:
            found.append((["query", name], f"{name} needs a time zone (for instance 2026-11-01T00:00:00Z)",
                          "timezone_missing", value.isoformat()))
        elif value is not None and not in_range(value):
            found.append((["query", name], f"{name} {RANGE_RULE}", "datetime_out_of_range", value.isoformat()))
    if found:
        raise _invalid(found)
    end = (end or now).astimezone(timezone.utc)
    # Near the calendar's first instant the default window is shorter rather than overflowing.
    start = start.astimezone(timezone.utc) if start is not None else max(end, EARLIEST + DEFAULT_WINDOW) - DEFAULT_WINDOW
    kind = REPORTS[report]
    interval = interval or ("day" if kind.series else None)
    found = [(["query", name], message, code, value)
             for name, message, code, value in problems(report, start, end, interval, group_by)]
    if compare and start < end and start - EARLIEST < end - start:
        found.append((["query", "compare"], f"the prior window would begin before {EARLIEST_TEXT}",
                      "datetime_out_of_range", "prior"))
    if found:
        raise _invalid(found)
    chosen = tuple((name, value) for name, value in filters.items() if name in FILTERS and value is not None)
    return ReportQuery(report=report, tenant_id=tenant_id, start=start, end=end, interval=interval,
                       group_by=group_by, filters=chosen, compare=compare)
