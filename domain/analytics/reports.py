"""The analytics reports (docs/analytics.md): their names, what each may be grouped by, the query
window's rules and its buckets. Pure: no I/O, time passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

VOLUME = "volume-by-status"
LATENCY = "latency-percentiles"
COST = "cost-breakdown"
FAILURES = "top-failures"
QUALITY = "outcome-quality"

INTERVALS = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}
GROUP_BY = ("voice_engine", "direction", "mode", "number_id", "status", "error_code", "country")
FILTERS = ("direction", "mode", "voice_engine", "number_id")
TOP = 8  # a breakdown keeps the 8 values with the most calls; the rest are one row, OTHER (SPEC.md Limits)
OTHER = "Other"
DEFAULT_WINDOW = timedelta(days=7)
MAX_WINDOW = timedelta(days=400)
MAX_HOURLY_WINDOW = timedelta(days=31)


@dataclass(frozen=True)
class ReportKind:
    name: str
    series: bool  # a series is bucketed by `interval` always (default "day"); the others only when asked
    broken_down_by: str | None = None  # the dimension the report itself is by (not a group_by)
    groupable: bool = True


REPORTS = {kind.name: kind for kind in (
    ReportKind(VOLUME, series=True, broken_down_by="status"),
    ReportKind(LATENCY, series=False),
    ReportKind(COST, series=False),
    ReportKind(FAILURES, series=False, broken_down_by="error_code", groupable=False),
    ReportKind(QUALITY, series=False),
)}


@dataclass(frozen=True)
class ReportQuery:
    """One report over ``start <= created_at < end`` of the tenant's terminal calls."""

    report: str
    tenant_id: str
    start: datetime
    end: datetime
    interval: str | None = None
    group_by: str | None = None
    filters: tuple[tuple[str, str], ...] = ()
    compare: bool = False

    def __post_init__(self) -> None:
        # Names that reach SQL as identifiers come from these lists only (values travel as parameters).
        if self.report not in REPORTS or (self.interval is not None and self.interval not in INTERVALS) \
                or (self.group_by is not None and self.group_by not in GROUP_BY) \
                or any(name not in FILTERS for name, _ in self.filters):
            raise ValueError(f"not a report query: {self.report} {self.interval} {self.group_by} {self.filters}")

    def prior(self) -> ReportQuery:
        """The same report over the window of equal length that ends where this one starts."""
        length = self.end - self.start
        return replace(self, start=self.start - length, end=self.start, compare=False)


def problems(report: str, start: datetime, end: datetime, interval: str | None,
             group_by: str | None) -> list[tuple[str, str, str, object]]:
    """What is wrong with a report's query, every problem at once: (parameter, message, code, input)."""
    kind = REPORTS[report]
    found: list[tuple[str, str, str, object]] = []
    if start >= end:
        found.append(("start", "start must be before end", "window_empty", start.isoformat()))
    elif end - start > MAX_WINDOW:
        found.append(("start", f"the window is longer than {MAX_WINDOW.days} days", "window_too_long",
                      start.isoformat()))
    elif interval == "hour" and end - start > MAX_HOURLY_WINDOW:
        found.append(("interval", f"interval=hour covers at most {MAX_HOURLY_WINDOW.days} days; "
                                  "use day or week", "too_many_buckets", interval))
    if group_by is not None and not kind.groupable:
        found.append(("group_by", f"{report} is broken down by {kind.broken_down_by} only", "group_by_not_supported",
                      group_by))
    elif group_by is not None and group_by == kind.broken_down_by:
        found.append(("group_by", f"{report} is already broken down by {group_by}", "group_by_not_supported",
                      group_by))
    return found


def bucket_of(moment: datetime, interval: str) -> datetime:
    """The start of the UTC bucket holding ``moment`` (a week starts on Monday, ISO 8601)."""
    if interval == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=day.weekday()) if interval == "week" else day


def buckets(start: datetime, end: datetime, interval: str) -> list[datetime]:
    """Every bucket the window touches, in order: the first and last may be partial."""
    step, moment, found = INTERVALS[interval], bucket_of(start, interval), []
    while moment < end:
        found.append(moment)
        moment += step
    return found
