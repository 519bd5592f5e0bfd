"""When a number is open (SPEC.md Number: hours_json, timezone, overflow_action, voicemail_mode).

``hours_json`` is ``{"mon": [["09:00", "17:30"]], ...}``: days ``mon``..``sun``, each a list of
non-overlapping ``[start, end)`` windows in 24 h ``HH:MM`` wall-clock time of the number's time zone
(``end`` may be ``"24:00"``); a day left out is closed, and ``null`` hours are always open. Hours are
judged on local wall time, so across a DST change a time skipped in the spring simply never occurs
and a repeated autumn hour is open both times or neither.

Pure: the standard library and zoneinfo. Checkers follow ``settings.CHECKS``: ``(value,
own_e164, problems) -> normalized value``, every problem collected, never just the first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone as dt_timezone
from typing import Any
from zoneinfo import ZoneInfo

from domain.errors import InputProblem

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # datetime.weekday() order
OVERFLOW_ACTIONS = ("voicemail", "transfer", "message", "hangup")
VOICEMAIL_MODES = ("off", "overflow_only", "always")
MAX_WINDOWS = 12  # per day
END_OF_DAY = "24:00"
SEARCH_DAYS = 8  # how far ahead next_opening looks

# [0-9], not \d: other scripts' digits are not times.
_TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")
_DAY_MINUTES = 24 * 60


def check_hours(value: Any, _: str, problems: list[InputProblem]) -> dict[str, list[list[str]]] | None:
    """``hours_json`` normalized: days in week order, each day's windows sorted by start. ``None``
    (always open) is returned as is."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        problems.append(([], 'must be an object of days, e.g. {"mon": [["09:00", "17:30"]]}, or null for always open',
                         "dict_type", value))
        return None
    before = len(problems)
    found: dict[str, list[list[str]]] = {}
    for key, windows in value.items():
        if key not in DAYS:
            problems.append(([key], f"{key} is not a day; days are {', '.join(DAYS)}", "unknown_day", windows))
            continue
        day = _day(key, windows, problems)
        if day is not None:
            found[key] = day
    if len(problems) > before:
        return None
    return {day: found[day] for day in DAYS if day in found}


def _day(day: str, windows: Any, problems: list[InputProblem]) -> list[list[str]] | None:
    if not isinstance(windows, list | tuple):
        problems.append(([day], 'must be a list of [start, end] windows, e.g. [["09:00", "17:30"]]', "list_type",
                         windows))
        return None
    if len(windows) > MAX_WINDOWS:
        problems.append(([day], f"a day has at most {MAX_WINDOWS} windows", "too_long", len(windows)))
        return None
    before = len(problems)
    valid: list[tuple[int, int, int, list[str]]] = []  # (start, end, index, window)
    for index, window in enumerate(windows):
        checked = _window([day, index], window, problems)
        if checked is not None:
            valid.append((minutes(checked[0]), minutes(checked[1]), index, checked))
    valid.sort()
    latest: tuple[int, int] | None = None  # (end, index) of the window reaching furthest so far
    for start, end, index, window in valid:
        if latest is not None and start < latest[0]:
            problems.append(([day, index], f"overlaps window {latest[1]} of the same day", "window_overlap", window))
        if latest is None or end > latest[0]:
            latest = (end, index)
    if len(problems) > before:
        return None
    return [window for _, _, _, window in valid]


def _window(loc: list[str | int], window: Any, problems: list[InputProblem]) -> list[str] | None:
    if not isinstance(window, list | tuple) or len(window) != 2:
        problems.append((loc, 'must be a [start, end] pair of HH:MM times, e.g. ["09:00", "17:30"]', "window_type",
                         window))
        return None
    start, end = window
    before = len(problems)
    if not _is_time(start):
        problems.append(([*loc, 0], "must be HH:MM in 24 h time, e.g. 09:00", "time_format", start))
    if not (_is_time(end) or end == END_OF_DAY):
        problems.append(([*loc, 1], "must be HH:MM in 24 h time, e.g. 17:30, or 24:00 for the end of the day",
                         "time_format", end))
    if len(problems) > before:
        return None
    if minutes(start) >= minutes(end):
        problems.append((loc, "must start before it ends", "window_order", list(window)))
        return None
    return [start, end]


def _is_time(value: Any) -> bool:
    return isinstance(value, str) and _TIME.fullmatch(value) is not None


def minutes(time: str) -> int:
    """``"HH:MM"`` (or ``"24:00"``) as minutes since midnight."""
    hours, mins = time.split(":")
    return int(hours) * 60 + int(mins)


def check_overflow_action(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    """What a call outside hours gets: one of ``OVERFLOW_ACTIONS``."""
    return _one_of(OVERFLOW_ACTIONS, value, problems)


def check_voicemail_mode(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    """When callers reach voicemail: one of ``VOICEMAIL_MODES``."""
    return _one_of(VOICEMAIL_MODES, value, problems)


def _one_of(allowed: tuple[str, ...], value: Any, problems: list[InputProblem]) -> str | None:
    if isinstance(value, str) and value in allowed:
        return value
    problems.append(([], f"must be one of {', '.join(allowed)}", "enum", value))
    return None


def is_open(hours: Mapping[str, Any] | None, timezone: str | None, at: datetime) -> bool:
    """Whether checked ``hours`` are open at the aware instant ``at``: the local weekday's windows
    hold its wall-clock time (``timezone`` None: UTC). ``None`` hours are always open."""
    if hours is None:
        return True
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("at must be an aware datetime")
    # Through UTC: an ``at`` already in the zone may carry a wall time the clock skipped.
    local = at.astimezone(dt_timezone.utc).astimezone(_zone(timezone))
    now = local.hour * 60 + local.minute  # windows are whole minutes, so seconds never change the answer
    return any(minutes(start) <= now < minutes(end) for start, end in hours.get(DAYS[local.weekday()]) or ())


def next_opening(hours: Mapping[str, Any] | None, timezone: str | None, at: datetime) -> datetime | None:
    """The first instant (aware, UTC) at or after ``at`` when the number is open: ``at`` itself when it
    is open then, None when it opens at no time within ``SEARCH_DAYS`` days."""
    if hours is None or is_open(hours, timezone, at):
        return at.astimezone(dt_timezone.utc)
    zone = _zone(timezone)
    end = at + timedelta(days=SEARCH_DAYS)
    # Being open starts either when the wall clock reaches a window's start (a wall time that may
    # fall twice, fold 0 and 1, or never) or when the clock jumps at an offset change. Every such
    # candidate that is open is at or after the first opening, and the first opening is one of them.
    candidates = _transitions(zone, at, end)
    first = at.astimezone(zone).date() - timedelta(days=1)
    for offset in range(SEARCH_DAYS + 2):
        date = first + timedelta(days=offset)
        for start, _ in hours.get(DAYS[date.weekday()]) or ():
            wall = datetime(date.year, date.month, date.day, tzinfo=zone) + timedelta(minutes=minutes(start))
            candidates += [wall.replace(fold=fold).astimezone(dt_timezone.utc) for fold in (0, 1)]
    opens = [c for c in candidates if at < c <= end and is_open(hours, timezone, c)]
    return min(opens) if opens else None


def _transitions(zone: ZoneInfo, start: datetime, end: datetime) -> list[datetime]:
    """The instants in (start, end] at which ``zone``'s UTC offset changes, to the second."""
    found: list[datetime] = []
    step = 3600  # offsets do not change twice within an hour
    low = int(start.timestamp())
    last = int(end.timestamp())
    offset = _offset(zone, low)
    while low < last:
        high = min(low + step, last)
        new = _offset(zone, high)
        if new != offset:
            a, b = low, high  # offset(a) is the old one, offset(b) the new
            while b - a > 1:
                middle = (a + b) // 2
                if _offset(zone, middle) == offset:
                    a = middle
                else:
                    b = middle
            found.append(datetime.fromtimestamp(b, dt_timezone.utc))
        low, offset = high, new
    return found


def _offset(zone: ZoneInfo, seconds: int) -> timedelta | None:
    return datetime.fromtimestamp(seconds, zone).utcoffset()


def _zone(timezone: str | None) -> ZoneInfo:
    return ZoneInfo(timezone or "UTC")
