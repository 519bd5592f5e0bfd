"""A number's hours (SPEC.md Number: hours_json, timezone, overflow_action, voicemail_mode): the
shape ``check_hours`` accepts and every problem it reports at once, and ``is_open`` judging a window
set the same way on DST-change days as on any other, against an oracle that works in UTC intervals
instead of local wall time."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import InputProblem
from domain.numbers import hours as h
from domain.numbers.hours import DAYS, check_hours, check_overflow_action, check_voicemail_mode, is_open, next_opening

UTC = ZoneInfo("UTC")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def checked(value: Any) -> tuple[Any, list[InputProblem]]:
    problems: list[InputProblem] = []
    return check_hours(value, "+14155550100", problems), problems


def faults(value: Any) -> list[tuple[list[str | int], str]]:
    result, problems = checked(value)
    assert problems and result is None
    return [(loc, kind) for loc, _, kind, _ in problems]


def hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


# --- the shape -------------------------------------------------------------------------------


def test_hours_are_normalized_to_week_order_with_each_days_windows_sorted():
    result, problems = checked({"tue": [["13:00", "17:30"], ("09:00", "12:00")], "mon": [],
                                "sun": [["22:00", "24:00"]]})
    assert problems == []
    assert result == {"mon": [], "tue": [["09:00", "12:00"], ["13:00", "17:30"]], "sun": [["22:00", "24:00"]]}
    assert list(result) == ["mon", "tue", "sun"]


def test_null_hours_are_always_open_and_pass_as_null():
    assert checked(None) == (None, [])


@pytest.mark.parametrize("value", [[], "mon-fri 9-5", 5, True, [["09:00", "17:00"]]])
def test_hours_must_be_an_object_of_days(value):
    assert faults(value) == [([], "dict_type")]


@pytest.mark.parametrize("key", ["Mon", "monday", "holiday", "", 1])
def test_a_key_that_is_not_a_day_is_refused_at_that_key(key):
    """Its own type, not extra_forbidden (an unknown field of the number): the issue's item 10."""
    assert faults({"mon": [["09:00", "17:00"]], key: []}) == [([key], "unknown_day")]


@pytest.mark.parametrize("windows", [None, "09:00-17:00", {"start": "09:00"}, 9])
def test_a_day_must_be_a_list_of_windows(windows):
    assert faults({"wed": windows}) == [(["wed"], "list_type")]


def test_a_day_has_at_most_twelve_windows():
    twelve = [[hhmm(60 * i), hhmm(60 * i + 30)] for i in range(12)]
    assert checked({"fri": twelve})[1] == []
    result, problems = checked({"fri": [*twelve, ["23:00", "23:30"]]})
    assert result is None
    assert problems == [(["fri"], "a day has at most 12 windows", "too_long", 13)]


@pytest.mark.parametrize("window", ["09:00-17:00", ["09:00"], ["09:00", "10:00", "11:00"], {"start": "09:00"}, None])
def test_a_window_is_a_pair_of_times(window):
    assert faults({"thu": [["07:00", "08:00"], window]}) == [(["thu", 1], "window_type")]


@pytest.mark.parametrize("start", ["9:00", "24:00", "12:60", "25:00", "0900", "09:00:00", " 09:00", "09:00 ",
                                   "\u0660\u0669:\u0660\u0660", "09h00", 900, None, ""])
def test_a_start_must_be_hh_mm_in_24_hour_time(start):
    result, problems = checked({"mon": [[start, "23:00"]]})
    assert result is None
    assert problems == [(["mon", 0, 0], "must be HH:MM in 24 h time, e.g. 09:00", "time_format", start)]


@pytest.mark.parametrize("end", ["24:01", "24:30", "9:00", "23:60", 1700, None])
def test_an_end_must_be_hh_mm_or_24_00(end):
    assert faults({"mon": [["00:00", end]]}) == [(["mon", 0, 1], "time_format")]


def test_the_end_of_the_day_is_24_00_and_midnight_is_00_00():
    assert checked({"sat": [["00:00", "00:01"], ["23:59", "24:00"]]}) == (
        {"sat": [["00:00", "00:01"], ["23:59", "24:00"]]}, [])


def test_a_bad_start_and_a_bad_end_are_both_reported():
    assert faults({"mon": [["9", "25:00"]]}) == [(["mon", 0, 0], "time_format"), (["mon", 0, 1], "time_format")]


@pytest.mark.parametrize("window", [["10:00", "10:00"], ["17:00", "09:00"], ["00:00", "00:00"]])
def test_a_window_starts_before_it_ends(window):
    result, problems = checked({"tue": [window]})
    assert result is None and problems == [(["tue", 0], "must start before it ends", "window_order", window)]


def test_an_overlapping_window_is_reported_at_its_own_index_naming_the_one_it_overlaps():
    result, problems = checked({"mon": [["11:00", "13:00"], ["09:00", "12:00"]]})
    assert result is None
    assert problems == [(["mon", 0], "overlaps window 1 of the same day", "window_overlap", ["11:00", "13:00"])]


def test_every_window_inside_a_long_one_is_reported():
    assert faults({"mon": [["09:00", "17:00"], ["10:00", "11:00"], ["12:00", "13:00"], ["17:00", "18:00"]]}) == [
        (["mon", 1], "window_overlap"), (["mon", 2], "window_overlap")]
    assert faults({"mon": [["09:00", "10:00"], ["09:00", "10:00"]]}) == [(["mon", 1], "window_overlap")]


def test_windows_that_touch_do_not_overlap():
    assert checked({"mon": [["12:00", "17:00"], ["09:00", "12:00"]]}) == (
        {"mon": [["09:00", "12:00"], ["12:00", "17:00"]]}, [])


def test_every_problem_is_reported_at_once():
    result, problems = checked({"mon": [["9:00", "17:00"]], "tue": [["10:00", "09:00"]], "holiday": []})
    assert result is None
    assert [(loc, kind) for loc, _, kind, _ in problems] == [
        (["mon", 0, 0], "time_format"), (["tue", 0], "window_order"), (["holiday"], "unknown_day")]


def test_type_codes_are_snake_case_and_messages_are_sentences():
    _, problems = checked({"mon": [["9", "25:00"], "x", ["09:00", "08:00"]], "x": 1, "tue": "y",
                           "wed": [["01:00", "02:00"], ["01:30", "03:00"]], "thu": [["00:00", "01:00"]] * 13})
    assert len(problems) == 8
    for _, message, kind, _ in problems:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", kind)
        assert message and message[0].islower() and not message.endswith(".")


# --- generated window sets -------------------------------------------------------------------

# Minutes from midnight, leaning on the ones DST changes move: midnight, 01:00-03:00 and 23:00-24:00.
BOUNDARIES = st.one_of(st.integers(0, 1440), st.sampled_from([0, 30, 60, 90, 120, 135, 150, 180, 1380, 1410, 1440]))


@st.composite
def window_sets(draw: st.DrawFn) -> dict[str, list[list[str]]]:
    """Valid hours as a client might send them: any days, in any order, windows unsorted."""
    hours: dict[str, list[list[str]]] = {}
    for day in draw(st.lists(st.sampled_from(DAYS), unique=True)):
        points = sorted(draw(st.sets(BOUNDARIES, max_size=8)))
        step = 1 if draw(st.booleans()) else 2  # 1: every window touches the next
        windows = [[hhmm(points[i]), hhmm(points[i + 1])] for i in range(0, len(points) - 1, step)]
        hours[day] = draw(st.permutations(windows))
    return hours


@settings(max_examples=200)
@given(window_sets())
def test_property_valid_hours_pass_sorted_and_checking_again_changes_nothing(hours):
    result, problems = checked(hours)
    assert problems == []
    assert result == {day: sorted(hours[day]) for day in DAYS if day in hours}
    assert checked(result) == (result, [])


@settings(max_examples=150)
@given(window_sets().filter(lambda hours: sum(1 for w in hours.values() if w) >= 1), st.data())
def test_property_a_fault_in_each_of_several_days_gives_one_problem_each(hours, data):
    days = data.draw(st.lists(st.sampled_from([d for d, w in hours.items() if w]), min_size=1, unique=True))
    broken = {day: [list(w) for w in windows] for day, windows in hours.items()}
    expected = []
    for day in days:
        index = data.draw(st.integers(0, len(broken[day]) - 1))
        fault = data.draw(st.sampled_from(["start", "order", "shape"]))
        if fault == "start":
            broken[day][index][0] = "9:00"
            expected.append(([day, index, 0], "time_format"))
        elif fault == "order":
            broken[day][index] = [broken[day][index][0]] * 2  # starts as it ends
            expected.append(([day, index], "window_order"))
        else:
            broken[day][index] = "-".join(broken[day][index])
            expected.append(([day, index], "window_type"))
    assert sorted(faults(broken)) == sorted(expected)


# --- open or closed --------------------------------------------------------------------------

# Offset changes (the instant, UTC) in each zone's DST-transition weeks; UTC has none, so its
# "transitions" are just the London ones, to judge the same weeks.
TRANSITIONS = [
    ("Europe/London", utc(2026, 3, 29, 1)),  # 01:00 GMT -> 02:00 BST, Sunday
    ("Europe/London", utc(2026, 10, 25, 1)),  # 02:00 BST -> 01:00 GMT, Sunday
    ("America/New_York", utc(2026, 3, 8, 7)),  # 02:00 EST -> 03:00 EDT, Sunday
    ("America/New_York", utc(2026, 11, 1, 6)),  # 02:00 EDT -> 01:00 EST, Sunday
    ("Australia/Lord_Howe", utc(2026, 4, 4, 15)),  # 02:00 +11 -> 01:30 +10:30, Sunday
    ("Australia/Lord_Howe", utc(2026, 10, 3, 15, 30)),  # 02:00 +10:30 -> 02:30 +11, Sunday
    ("America/Sao_Paulo", utc(2018, 2, 18, 2)),  # Sunday 00:00 -02 -> Saturday 23:00 -03: the day repeats an hour
    ("America/Sao_Paulo", utc(2018, 11, 4, 3)),  # Sunday 00:00 -03 -> 01:00 -02: midnight never happens
    ("UTC", utc(2026, 3, 29, 1)),
    ("UTC", utc(2026, 10, 25, 1)),
]


@pytest.mark.parametrize("zone,instant", TRANSITIONS, ids=[f"{z}-{i:%Y-%m-%d}" for z, i in TRANSITIONS])
def test_the_transitions_are_where_the_zone_data_puts_them(zone, instant):
    before = (instant - timedelta(seconds=1)).astimezone(ZoneInfo(zone)).utcoffset()
    after = instant.astimezone(ZoneInfo(zone)).utcoffset()
    assert (before != after) == (zone != "UTC")


def oracle(hours: dict[str, list[list[str]]] | None, zone_name: str | None, at: datetime) -> bool:
    """Open or closed worked out in UTC: each window of each nearby local date becomes, for every
    offset its ends can have (fold 0 and 1), the UTC interval it covers under that offset; ``at`` is
    open when it lies in one and the zone really has that offset at ``at``."""
    if hours is None:
        return True
    zone = ZoneInfo(zone_name or "UTC")
    instant = at.astimezone(UTC).replace(tzinfo=None)
    real_offset = datetime.fromtimestamp(at.timestamp(), zone).utcoffset()
    for days in (-1, 0, 1):
        day = instant.date() + timedelta(days=days)
        for start, end in hours.get(DAYS[day.weekday()], []):
            opens = datetime.combine(day, datetime.min.time()) + timedelta(minutes=h.minutes(start))
            closes = datetime.combine(day, datetime.min.time()) + timedelta(minutes=h.minutes(end))
            offsets = {wall.replace(tzinfo=zone, fold=fold).utcoffset() for wall in (opens, closes) for fold in (0, 1)}
            if any(offset == real_offset and opens - offset <= instant < closes - offset for offset in offsets):
                return True
    return False


AROUND = st.one_of(st.integers(-4 * 86400, 4 * 86400), st.integers(-3 * 3600, 3 * 3600), st.integers(-26 * 3600, 3600))


@settings(max_examples=600, deadline=None)
@given(window_sets(), st.sampled_from(TRANSITIONS), AROUND, st.integers(0, 999_999))
def test_property_is_open_agrees_with_the_utc_interval_oracle_across_dst_weeks(hours, case, seconds, micros):
    zone, transition = case
    normalized, _ = checked(hours)
    at = transition + timedelta(seconds=seconds, microseconds=micros)
    assert is_open(normalized, zone, at) == oracle(normalized, zone, at)
    assert is_open(normalized, zone, at.astimezone(ZoneInfo(zone))) == is_open(normalized, zone, at)


@settings(max_examples=300, deadline=None)
@given(window_sets(), st.sampled_from(TRANSITIONS), AROUND, st.sampled_from([-7, 7, 14]))
def test_property_a_wall_time_on_a_dst_day_is_judged_as_on_any_other_day(hours, case, seconds, weeks_days):
    zone_name, transition = case
    zone = ZoneInfo(zone_name)
    normalized, _ = checked(hours)
    local = (transition + timedelta(seconds=seconds)).astimezone(zone)
    elsewhere = (local.replace(tzinfo=None) + timedelta(days=weeks_days)).replace(tzinfo=zone)
    # the same weekday and wall time a week or two away, where the clock runs straight
    assert elsewhere.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == elsewhere.replace(tzinfo=None)
    assert is_open(normalized, zone_name, local) == is_open(normalized, zone_name, elsewhere)


SWEEP_HOURS = [
    {"sat": [["23:00", "24:00"]],
     "sun": [["00:00", "00:30"], ["01:00", "01:45"], ["02:00", "02:30"], ["03:00", "24:00"]]},
    {day: [["00:00", "24:00"]] for day in DAYS},
    {"sun": [["01:30", "02:00"], ["02:15", "02:45"]], "mon": [["00:00", "00:01"]]},
    {},
]


@pytest.mark.parametrize("zone,transition", TRANSITIONS, ids=[f"{z}-{i:%Y-%m-%d}" for z, i in TRANSITIONS])
def test_every_minute_of_the_transition_days_agrees_with_the_oracle(zone, transition):
    for hours in SWEEP_HOURS:
        for minute in range(-30 * 60, 30 * 60):
            at = transition + timedelta(minutes=minute)
            assert is_open(hours, zone, at) == oracle(hours, zone, at), (hours, at)


# The examples the property covers, worked by hand.


def open_minutes(hours: dict[str, Any], zone: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The open stretches between two instants, to the minute, as [from, to) UTC pairs."""
    stretches: list[tuple[datetime, datetime]] = []
    at = start
    while at < end:
        if is_open(hours, zone, at):
            if stretches and stretches[-1][1] == at:
                stretches[-1] = (stretches[-1][0], at + timedelta(minutes=1))
            else:
                stretches.append((at, at + timedelta(minutes=1)))
        at += timedelta(minutes=1)
    return stretches


def test_a_window_in_the_spring_gap_never_opens_that_day():
    ny = "America/New_York"
    assert open_minutes({"sun": [["02:00", "02:30"]]}, ny, utc(2026, 3, 8), utc(2026, 3, 9)) == []
    assert open_minutes({"sun": [["02:15", "04:00"]]}, ny, utc(2026, 3, 8), utc(2026, 3, 9)) == [
        (utc(2026, 3, 8, 7), utc(2026, 3, 8, 8))]  # from the jump to 03:00 EDT until 04:00 EDT
    assert open_minutes({"sun": [["00:00", "00:30"]]}, "America/Sao_Paulo", utc(2018, 11, 4), utc(2018, 11, 5)) == []
    assert open_minutes({"sun": [["02:00", "02:45"]]}, "Australia/Lord_Howe", utc(2026, 10, 3), utc(2026, 10, 4)) == [
        (utc(2026, 10, 3, 15, 30), utc(2026, 10, 3, 15, 45))]  # 02:30-02:45 +11


def test_a_window_in_the_repeated_autumn_hour_opens_both_times():
    ny = "America/New_York"
    assert open_minutes({"sun": [["01:15", "01:30"]]}, ny, utc(2026, 11, 1), utc(2026, 11, 2)) == [
        (utc(2026, 11, 1, 5, 15), utc(2026, 11, 1, 5, 30)), (utc(2026, 11, 1, 6, 15), utc(2026, 11, 1, 6, 30))]
    assert open_minutes({"sun": [["01:00", "02:00"]]}, "Europe/London", utc(2026, 10, 24), utc(2026, 10, 26)) == [
        (utc(2026, 10, 25, 0), utc(2026, 10, 25, 2))]  # two hours of 01:xx
    assert open_minutes({"sun": [["01:30", "02:00"]]}, "Australia/Lord_Howe", utc(2026, 4, 4), utc(2026, 4, 5)) == [
        (utc(2026, 4, 4, 14, 30), utc(2026, 4, 4, 15, 30))]  # 01:30-02:00 at +11, then again at +10:30
    assert open_minutes({"sat": [["23:00", "24:00"]]}, "America/Sao_Paulo", utc(2018, 2, 17), utc(2018, 2, 19)) == [
        (utc(2018, 2, 18, 1), utc(2018, 2, 18, 3))]  # Saturday's last hour, twice


def test_an_instant_given_as_a_wall_time_the_clock_skipped_is_judged_by_its_real_wall_time():
    ny = ZoneInfo("America/New_York")
    skipped = datetime(2026, 3, 8, 2, 15, tzinfo=ny)  # never shown; fold 0 reads it as 07:15Z, 03:15 EDT
    assert skipped.astimezone(UTC) == utc(2026, 3, 8, 7, 15)
    assert not is_open({"sun": [["02:00", "02:30"]]}, "America/New_York", skipped)
    assert is_open({"sun": [["03:00", "03:30"]]}, "America/New_York", skipped)


def test_24_00_closes_at_midnight_and_a_missing_zone_is_utc():
    hours = {"mon": [["22:00", "24:00"]]}
    assert is_open(hours, None, utc(2026, 6, 1, 23, 59, 59, 999_999))  # a Monday
    assert not is_open(hours, None, utc(2026, 6, 2))
    assert not is_open(hours, None, utc(2026, 6, 1, 21, 59, 59, 999_999))
    assert is_open(hours, None, utc(2026, 6, 1, 22))
    assert not is_open(hours, "Asia/Tokyo", utc(2026, 6, 1, 22))  # Tuesday 07:00 in Tokyo


def test_null_hours_are_always_open_and_empty_hours_never():
    assert is_open(None, "Europe/London", utc(2026, 3, 29, 1, 30))
    assert next_opening(None, "Europe/London", utc(2026, 3, 29, 1, 30)) == utc(2026, 3, 29, 1, 30)
    assert not any(is_open({"mon": []}, "UTC", utc(2026, 6, 1) + timedelta(hours=i)) for i in range(24 * 7))
    assert next_opening({}, "UTC", utc(2026, 6, 1)) is None


def test_the_instant_must_be_aware():
    with pytest.raises(ValueError):
        is_open({}, "UTC", datetime(2026, 6, 1, 12))
    with pytest.raises(ValueError):
        next_opening({}, "UTC", datetime(2026, 6, 1, 12))


# --- the next opening ------------------------------------------------------------------------


def test_the_next_opening_follows_the_local_clock_through_a_transition():
    ny = "America/New_York"
    saturday = utc(2026, 3, 7, 12)
    assert next_opening({"sun": [["02:15", "04:00"]]}, ny, saturday) == utc(2026, 3, 8, 7)  # the jump to 03:00 EDT
    assert next_opening({"sun": [["02:00", "02:30"]]}, ny, saturday) == utc(2026, 3, 15, 6)  # a week later, EDT
    assert next_opening({"sun": [["01:15", "01:30"]]}, ny, utc(2026, 11, 1, 5, 40)) == utc(2026, 11, 1, 6, 15)
    assert next_opening({"sat": [["09:00", "17:00"]]}, ny, utc(2026, 3, 7, 15, 30)) == utc(2026, 3, 7, 15, 30)
    assert next_opening({"sun": [["00:00", "08:00"]]}, "America/Sao_Paulo", utc(2018, 11, 3, 12)) == utc(2018, 11, 4, 3)
    assert next_opening({"mon": [["09:00", "17:00"]]}, "UTC", utc(2026, 6, 1, 17)) == utc(2026, 6, 8, 9)
    assert next_opening({"mon": [["09:00", "17:00"]]}, "UTC", utc(2026, 6, 1, 12)).tzinfo is not None


@settings(max_examples=40, deadline=None)
@given(window_sets(), st.sampled_from(TRANSITIONS), AROUND, st.integers(0, 59_999_999))
def test_property_the_next_opening_is_the_first_open_minute(hours, case, seconds, micros):
    zone, transition = case
    normalized, _ = checked(hours)
    at = transition + timedelta(seconds=seconds, microseconds=micros)
    found = next_opening(normalized, zone, at)
    if is_open(normalized, zone, at):
        assert found == at
        return
    # Openings fall on whole UTC minutes in these zones (windows, offsets and transitions all do).
    minute = at.replace(second=0, microsecond=0) + timedelta(minutes=1)
    limit = at + timedelta(days=h.SEARCH_DAYS)
    while minute <= limit and not is_open(normalized, zone, minute):
        minute += timedelta(minutes=1)
    assert found == (minute if minute <= limit else None)
    assert found is None or found.utcoffset() == timedelta(0)


# --- overflow_action and voicemail_mode ------------------------------------------------------


@pytest.mark.parametrize("check,allowed", [(check_overflow_action, ("voicemail", "transfer", "message", "hangup")),
                                           (check_voicemail_mode, ("off", "overflow_only", "always"))])
def test_the_enums_take_their_values_and_list_them_when_refusing(check, allowed):
    assert allowed in (h.OVERFLOW_ACTIONS, h.VOICEMAIL_MODES)
    for value in allowed:
        problems: list[InputProblem] = []
        assert check(value, "+14155550100", problems) == value and problems == []
    for value in ["Voicemail", "", None, 1, ["off"], "overflow"]:
        problems = []
        assert check(value, "+14155550100", problems) is None
        assert problems == [([], f"must be one of {', '.join(allowed)}", "enum", value)]


def test_days_run_monday_to_sunday_as_weekday_numbers():
    assert DAYS == ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
    assert [DAYS[date(2026, 6, 1 + i).weekday()] for i in range(7)] == list(DAYS)  # 2026-06-01 is a Monday
