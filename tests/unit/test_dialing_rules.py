"""Dialing rules of call creation (ARCHITECTURE.md §7; SPEC.md "What the service does" §10, Errors 207).

Strict E.164, emergency/N11/premium refusals, consent, and call hours 08:00-21:00 in every zone.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneNumberFormat, PhoneNumberType
from phonenumbers.timezone import time_zones_for_number

from domain.calls.dialing_rules import (
    CONSENT_TYPES,
    Destination,
    check_call_hours,
    check_consent,
    is_emergency,
    next_allowed_time,
    parse_destination,
)
from domain.errors import (
    CallHoursUnknownError,
    ConsentMissingError,
    DialingRuleError,
    DomainError,
    EmergencyNumberError,
    InvalidConsentTypeError,
    InvalidE164Error,
    N11NumberError,
    OutsideCallHoursError,
    PremiumNumberError,
)

UTC = timezone.utc
NEW_YORK = "+12125550123"
LONDON = "+442079460000"
TOLL_FREE = "+18002530000"
E164_SHAPE = re.compile(r"\+[1-9][0-9]{1,14}")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def code_of(call, *args) -> str | None:
    try:
        call(*args)
    except DomainError as exc:
        return exc.code
    return None


# --- E.164 -----------------------------------------------------------------------------------


def test_a_valid_number_parses_with_its_region_and_time_zone():
    destination = parse_destination(NEW_YORK)
    assert destination == Destination(e164=NEW_YORK, region="US", time_zones=("America/New_York",))


@pytest.mark.parametrize(
    "raw",
    [
        "++12125550123",  # phonenumbers itself accepts a doubled plus (FIELD-NOTES "phone numbers")
        "+1 212 555 0123",
        "12125550123",
        "+1212555012\u0663",  # Arabic-Indic digit
        "+\uff11\uff12\uff11\uff12\uff15\uff15\uff15\uff10\uff11\uff12\uff13",  # fullwidth digits
        "+12125550123\u200f",  # trailing right-to-left mark
        "\u202a+12125550123",
        "+12125550123\n",
        " +12125550123",
        "+02125550123",
        "+1",
        "+1234567890123456",  # 16 digits
        "",
        "+",
        "+1-212-555-0123",
        "+1(212)5550123",
        "tel:+12125550123",
    ],
)
def test_anything_but_plus_and_ascii_digits_is_refused_as_invalid_e164(raw):
    with pytest.raises(InvalidE164Error) as caught:
        parse_destination(raw)
    assert caught.value.code == "invalid_e164"
    assert "E.164" in caught.value.message


@pytest.mark.parametrize("raw", [None, 12125550123, b"+12125550123"])
def test_a_non_string_destination_is_refused_as_invalid_e164(raw):
    assert code_of(parse_destination, raw) == "invalid_e164"


@pytest.mark.parametrize(
    "raw",
    [
        "+15555555555",  # well-formed, but no such NANP number
        "+7912345678",  # one digit short
        "+4402079460000",  # national trunk 0 kept: not the canonical E.164 form
        "+999123456",  # unassigned country code
    ],
)
def test_a_well_formed_but_invalid_number_is_refused_as_invalid_e164(raw):
    assert code_of(parse_destination, raw) == "invalid_e164"


@pytest.mark.parametrize("raw", ["+1911", "+19115550123", "+1112", "+44999", "+44112", "+33112", "+49110", "+91112"])
def test_emergency_numbers_are_refused(raw):
    with pytest.raises(EmergencyNumberError) as caught:
        parse_destination(raw)
    assert caught.value.code == "emergency_number"
    assert raw in caught.value.message


@pytest.mark.parametrize("code", ["211", "311", "411", "511", "611", "711", "811"])
@pytest.mark.parametrize("suffix", ["", "5550123"])
def test_nanp_n11_service_codes_are_refused(code, suffix):
    with pytest.raises(N11NumberError) as caught:
        parse_destination(f"+1{code}{suffix}")
    assert caught.value.code == "n11_number"
    assert code in caught.value.message


@pytest.mark.parametrize("raw", ["+19005550123", "+449098790000", "+979123456789"])
def test_premium_rate_numbers_are_refused(raw):
    with pytest.raises(PremiumNumberError) as caught:
        parse_destination(raw)
    assert caught.value.code == "premium_number"


@pytest.mark.parametrize("region", ["AU", "BR", "DE", "CH"])
def test_shared_cost_business_lines_are_allowed(region):
    example = phonenumbers.example_number_for_type(region, PhoneNumberType.SHARED_COST)
    raw = phonenumbers.format_number(example, PhoneNumberFormat.E164)
    assert parse_destination(raw).e164 == raw


def test_a_toll_free_number_spans_every_zone_of_the_plan():
    zones = parse_destination(TOLL_FREE).time_zones
    assert {"America/New_York", "America/Los_Angeles", "Pacific/Honolulu", "Pacific/Guam"} <= set(zones)
    assert "Etc/Unknown" not in zones


def test_a_non_geographic_number_has_no_region_and_no_known_zone():
    destination = parse_destination("+80012345678")
    assert destination.region is None
    assert destination.time_zones == ()


@settings(max_examples=200)
@given(st.text())
def test_property_any_text_without_the_strict_shape_is_refused_as_invalid_e164(raw):
    if E164_SHAPE.fullmatch(raw):
        return
    assert code_of(parse_destination, raw) == "invalid_e164"


@settings(max_examples=100)
@given(st.from_regex(r"\+[1-9][0-9]{1,14}", fullmatch=True), st.sampled_from(["\n", " ", "\u200f", "\u202a", "+", "0"]), st.booleans())
def test_property_a_valid_shape_with_any_extra_character_is_refused(raw, extra, in_front):
    if extra == "0" and not in_front and len(raw) < 16:
        return  # one more digit can still be a well-formed number
    assert code_of(parse_destination, extra + raw if in_front else raw + extra) == "invalid_e164"


@settings(max_examples=150)
@given(st.from_regex(r"\+[1-9][0-9]{1,14}", fullmatch=True))
def test_property_a_strictly_shaped_string_is_accepted_unchanged_or_refused_with_a_dialing_code(raw):
    try:
        destination = parse_destination(raw)
    except DialingRuleError as exc:
        assert exc.code in {"invalid_e164", "emergency_number", "n11_number", "premium_number"}
    else:
        assert destination.e164 == raw
        assert all(ZoneInfo(zone) for zone in destination.time_zones)


@settings(max_examples=200)
@given(
    st.sampled_from(sorted(phonenumbers.SUPPORTED_REGIONS)),
    st.sampled_from([PhoneNumberType.FIXED_LINE, PhoneNumberType.MOBILE, PhoneNumberType.TOLL_FREE]),
)
def test_property_example_numbers_of_every_region_round_trip(region, number_type):
    example = phonenumbers.example_number_for_type(region, number_type)
    if example is None:
        return
    raw = phonenumbers.format_number(example, PhoneNumberFormat.E164)
    destination = parse_destination(raw)
    assert destination.e164 == raw
    assert destination.region == phonenumbers.region_code_for_number(example)
    assert destination.time_zones, "geographic numbers always have a zone (country level at worst)"
    assert all(ZoneInfo(zone) for zone in destination.time_zones)


# --- consent ---------------------------------------------------------------------------------


@pytest.mark.parametrize("consent_type", CONSENT_TYPES)
def test_each_consent_type_of_the_spec_is_accepted(consent_type):
    check_consent(consent_type)


@pytest.mark.parametrize("consent_type", [None, "", "   "])
def test_absent_consent_is_refused_as_missing(consent_type):
    with pytest.raises(ConsentMissingError) as caught:
        check_consent(consent_type)
    assert caught.value.code == "consent_missing"


@pytest.mark.parametrize("consent_type", ["PRIOR_EXPRESS", "prior express", "implied", " emergency", 1, ["emergency"]])
def test_an_unknown_consent_type_is_refused(consent_type):
    with pytest.raises(InvalidConsentTypeError) as caught:
        check_consent(consent_type)
    assert caught.value.code == "invalid_consent_type"


@settings(max_examples=100)
@given(st.text())
def test_property_consent_is_accepted_only_for_the_three_spec_values(consent_type):
    expected = None if consent_type in CONSENT_TYPES else "consent_missing" if not consent_type.strip() else "invalid_consent_type"
    assert code_of(check_consent, consent_type) == expected


# --- call hours ------------------------------------------------------------------------------

NY = Destination(e164=NEW_YORK, region="US", time_zones=("America/New_York",))
LDN = Destination(e164=LONDON, region="GB", time_zones=("Europe/London",))

# (destination, transition day, UTC call windows of the day before, the day itself and the day after)
DST_DAYS = [
    (NY, "2026-03-08", [(utc(2026, 3, 7, 13), utc(2026, 3, 8, 2)), (utc(2026, 3, 8, 12), utc(2026, 3, 9, 1)),
                        (utc(2026, 3, 9, 12), utc(2026, 3, 10, 1))]),
    (NY, "2026-11-01", [(utc(2026, 10, 31, 12), utc(2026, 11, 1, 1)), (utc(2026, 11, 1, 13), utc(2026, 11, 2, 2)),
                        (utc(2026, 11, 2, 13), utc(2026, 11, 3, 2))]),
    (LDN, "2026-03-29", [(utc(2026, 3, 28, 8), utc(2026, 3, 28, 21)), (utc(2026, 3, 29, 7), utc(2026, 3, 29, 20)),
                         (utc(2026, 3, 30, 7), utc(2026, 3, 30, 20))]),
    (LDN, "2026-10-25", [(utc(2026, 10, 24, 7), utc(2026, 10, 24, 20)), (utc(2026, 10, 25, 8), utc(2026, 10, 25, 21)),
                         (utc(2026, 10, 26, 8), utc(2026, 10, 26, 21))]),
]


def allowed(destination: Destination, now: datetime, consent_type: str = "prior_express") -> bool:
    try:
        check_call_hours(destination, consent_type, now)
    except OutsideCallHoursError:
        return False
    return True


@pytest.mark.parametrize("destination,day,windows", DST_DAYS, ids=[f"{d.time_zones[0]}-{day}" for d, day, _ in DST_DAYS])
def test_call_hours_edges_on_dst_transition_days_follow_local_time(destination, day, windows):
    opens, closes = windows[1]  # the transition day itself
    tick = timedelta(microseconds=1)
    assert not allowed(destination, opens - tick)
    assert allowed(destination, opens)  # 08:00 local is inside (start inclusive)
    assert allowed(destination, closes - tick)
    assert not allowed(destination, closes)  # 21:00 local is outside (end exclusive)


@settings(max_examples=200)
@given(st.sampled_from(DST_DAYS), st.integers(min_value=0, max_value=66 * 3600 - 1), st.integers(0, 999_999))
def test_property_call_hours_across_dst_transitions_match_the_local_window(case, seconds, micros):
    destination, day, windows = case
    start = datetime.fromisoformat(day).replace(tzinfo=UTC) - timedelta(hours=18)  # after the day-2 window
    now = start + timedelta(seconds=seconds, microseconds=micros)
    assert allowed(destination, now) == any(opens <= now < closes for opens, closes in windows)


def test_a_refusal_names_the_local_time_and_the_next_allowed_time():
    with pytest.raises(OutsideCallHoursError) as caught:
        check_call_hours(NY, "prior_express", utc(2026, 3, 8, 11, 59))
    error = caught.value
    assert error.code == "outside_call_hours"
    assert "07:59 in America/New_York" in error.message
    assert "08:00-21:00" in error.message
    assert error.next_allowed_at == utc(2026, 3, 8, 12)
    assert error.local_times == (("America/New_York", utc(2026, 3, 8, 11, 59).astimezone(ZoneInfo("America/New_York"))),)


def test_emergency_consent_skips_call_hours():
    at_night = utc(2026, 3, 8, 7)  # 03:00 in New York
    assert not allowed(NY, at_night)
    check_call_hours(NY, "emergency", at_night)


def test_call_hours_need_an_aware_instant():
    with pytest.raises(ValueError):
        check_call_hours(NY, "prior_express", datetime(2026, 3, 8, 12))
    with pytest.raises(ValueError):
        next_allowed_time(NY, datetime(2026, 3, 8, 12))


def test_a_number_without_a_known_zone_cannot_pass_call_hours_except_with_emergency_consent():
    satellite = parse_destination("+8823421234")
    with pytest.raises(CallHoursUnknownError) as caught:
        check_call_hours(satellite, "prior_express", utc(2026, 6, 1, 15))
    assert caught.value.code == "call_hours_unknown"
    check_call_hours(satellite, "emergency", utc(2026, 6, 1, 15))
    assert next_allowed_time(satellite, utc(2026, 6, 1, 15)) is None


# --- multi-zone numbers ----------------------------------------------------------------------


def test_a_toll_free_number_is_refused_while_any_of_its_zones_is_outside_the_window():
    toll_free = parse_destination(TOLL_FREE)
    eight_in_new_york = utc(2026, 3, 8, 12)
    assert allowed(NY, eight_in_new_york)
    with pytest.raises(OutsideCallHoursError) as caught:
        check_call_hours(toll_free, "prior_express", eight_in_new_york)
    assert "Pacific/Honolulu" in caught.value.message or "more of this number's time zones" in caught.value.message


def test_a_toll_free_number_is_allowed_only_while_every_zone_is_inside():
    toll_free = parse_destination(TOLL_FREE)
    # 22:00Z on 2026-03-08: 08:00 next day in Guam (the latest) ... 19:30 in St John's (the earliest)
    assert not allowed(toll_free, utc(2026, 3, 8, 21, 59))
    assert allowed(toll_free, utc(2026, 3, 8, 22))
    assert allowed(toll_free, utc(2026, 3, 8, 23, 29, 59))
    assert not allowed(toll_free, utc(2026, 3, 8, 23, 30))  # 21:00 in St John's
    assert next_allowed_time(toll_free, utc(2026, 3, 8, 12)) == utc(2026, 3, 8, 22)


@settings(max_examples=150)
@given(st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC)))
def test_property_a_multi_zone_number_is_allowed_exactly_when_each_of_its_zones_is(now):
    toll_free = parse_destination(TOLL_FREE)
    singles = [Destination(TOLL_FREE, "US", (zone,)) for zone in toll_free.time_zones]
    assert allowed(toll_free, now) == all(allowed(single, now) for single in singles)


# --- next allowed time -----------------------------------------------------------------------


def test_next_allowed_time_is_now_when_now_is_inside():
    now = datetime(2026, 3, 8, 10, 30, tzinfo=ZoneInfo("America/New_York"))
    assert next_allowed_time(NY, now) == now


def test_next_allowed_time_is_the_next_local_eight_oclock():
    assert next_allowed_time(NY, utc(2026, 11, 1, 2)) == utc(2026, 11, 1, 13)  # 21:00 EDT -> 08:00 EST
    assert next_allowed_time(LDN, utc(2026, 3, 29, 0, 30)) == utc(2026, 3, 29, 7)


def test_next_allowed_time_is_none_when_the_zones_never_share_the_window():
    spread = Destination("+0", None, ("Etc/UTC", "Asia/Bangkok", "Pacific/Kiritimati"))
    assert next_allowed_time(spread, utc(2026, 6, 1)) is None
    with pytest.raises(OutsideCallHoursError) as caught:
        check_call_hours(spread, "prior_express", utc(2026, 6, 1))
    assert caught.value.next_allowed_at is None


ZONE_SETS = [
    ("America/New_York",),
    ("Europe/London",),
    ("Australia/Lord_Howe",),  # 30-minute DST shift
    ("Asia/Kathmandu",),  # +05:45
    ("America/New_York", "America/Los_Angeles"),
    ("Europe/London", "Asia/Tokyo"),
    ("Pacific/Honolulu", "Pacific/Guam", "America/St_Johns"),
]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(ZONE_SETS),
    st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC)),
)
def test_property_next_allowed_time_is_the_earliest_allowed_minute_step(zones, now):
    destination = Destination("+0", None, zones)
    found = next_allowed_time(destination, now)
    assert found is not None and now <= found <= now + timedelta(hours=48)
    assert allowed(destination, found)
    if found > now:
        assert not allowed(destination, found - timedelta(microseconds=1))
    minute = 0
    while now + timedelta(minutes=minute) < found:
        assert not allowed(destination, now + timedelta(minutes=minute))
        minute += 1


def _library_view(raw: str) -> tuple[str, ...] | str:
    """What phonenumbers' own functions say of a strictly shaped number, one call each."""
    number = phonenumbers.parse(raw, None)
    if not phonenumbers.is_valid_number(number):
        return "invalid"
    region = phonenumbers.region_code_for_number(number)
    zones = tuple(z for z in time_zones_for_number(number) if z != "Etc/Unknown")
    return (phonenumbers.number_type(number), region if region not in (None, "ZZ", "001") else None, *zones)


@settings(max_examples=300)
@given(
    st.sampled_from(sorted(phonenumbers.SUPPORTED_REGIONS)),
    st.sampled_from([PhoneNumberType.FIXED_LINE, PhoneNumberType.MOBILE, PhoneNumberType.TOLL_FREE,
                     PhoneNumberType.FIXED_LINE_OR_MOBILE, PhoneNumberType.VOIP, PhoneNumberType.UAN,
                     PhoneNumberType.SHARED_COST, PhoneNumberType.PERSONAL_NUMBER]),
    st.integers(min_value=0, max_value=99),
)
def test_property_parsing_agrees_with_the_librarys_validity_region_and_zones(region, number_type, tweak):
    """The type is worked out once per number: validity, region and zones must still be exactly
    what is_valid_number, region_code_for_number and time_zones_for_number say."""
    example = phonenumbers.example_number_for_type(region, number_type)
    if example is None:
        return
    raw = phonenumbers.format_number(example, PhoneNumberFormat.E164)
    raw = raw[:-2] + f"{tweak:02d}" if len(raw) > 5 else raw  # neighbours of the example, valid or not
    try:
        destination = parse_destination(raw)
    except InvalidE164Error:
        number = phonenumbers.parse(raw, None)
        assert not phonenumbers.is_valid_number(number) or phonenumbers.format_number(
            number, PhoneNumberFormat.E164) != raw
        return
    except DialingRuleError:
        return  # emergency, N11 and premium numbers are refused before or after validity
    view = _library_view(raw)
    assert view != "invalid"
    zones = tuple(z for z in view[2:] if ZoneInfo(z))
    assert (destination.region, destination.time_zones) == (view[1], zones)


@settings(max_examples=400)
@given(st.sampled_from(sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE)),
       st.one_of(st.sampled_from(["911", "112", "999", "000", "110", "119", "100", "101", "102", "103", "15", "17",
                                  "18", "190", "193", "060", "08", "1122", "9110", "11"]),
                 st.from_regex(r"[0-9]{1,7}", fullmatch=True)))
def test_property_the_emergency_check_agrees_with_the_library_for_every_region_of_a_code(country, national):
    regions = phonenumbers.region_codes_for_country_code(country)
    expected = any(phonenumbers.is_emergency_number(national, region) for region in regions)
    assert is_emergency(country, national) == expected


def test_the_emergency_numbers_of_shared_country_codes_are_found():
    assert is_emergency(1, "911") and is_emergency(44, "999") and is_emergency(44, "112")
    assert not is_emergency(44, "2071838750") and not is_emergency(1, "4155550123")
