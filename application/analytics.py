"""A report's query from the request's parameters (docs/analytics.md): the default window (the
last 7 days), the default bucket of a series, and every problem of the parameters at once (422)."""

from __future__ import annotations

from datetime import datetime, timezone

from application.errors import ValidationFailedError
from domain.analytics.reports import DEFAULT_WINDOW, FILTERS, REPORTS, ReportQuery, problems


def report_query(report: str, tenant_id: str, now: datetime, *, start: datetime | None, end: datetime | None,
                 interval: str | None, group_by: str | None, filters: dict[str, str | None],
                 compare: bool) -> ReportQuery:
    found: list[tuple[list[str | int], str, str, object]] = []
    for name, value in (("start", start), ("end", end)):
        if value is not None and value.tzinfo is None:
            found.append((["query", name], f"{name} needs a time zone (for instance 2026-11-01T00:00:00Z)",
                          "timezone_missing", value.isoformat()))
    if found:
        raise ValidationFailedError(found)
    end = (end or now).astimezone(timezone.utc)
    start = start.astimezone(timezone.utc) if start is not None else end - DEFAULT_WINDOW
    kind = REPORTS[report]
    interval = interval or ("day" if kind.series else None)
    found = [(["query", name], message, code, value)
             for name, message, code, value in problems(report, start, end, interval, group_by)]
    if found:
        raise ValidationFailedError(found)
    chosen = tuple((name, value) for name, value in filters.items() if name in FILTERS and value is not None)
    return ReportQuery(report=report, tenant_id=tenant_id, start=start, end=end, interval=interval,
                       group_by=group_by, filters=chosen, compare=compare)
