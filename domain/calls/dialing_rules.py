"""Dialing rules of call creation (ARCHITECTURE.md §7): strict E.164, consent, call hours.

Pure: time is passed in, no I/O. Imports only the standard library and ``phonenumbers``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import phonenumbers
from phonenumbers import PhoneMetadata, PhoneNumberFormat, PhoneNumberType
from phonenumbers.timezone import time_zones_for_geographical_number, time_zones_for_number

from domain.errors import (
    CallHoursUnknownError,
    ConsentMissingError,
    EmergencyNumberError,
    InvalidConsentTypeError,
    InvalidE164Error,
    N11NumberError,
    OutsideCallHoursError,
    PremiumNumberError,
)

CONSENT_TYPES = ("prior_express", "existing_business_relationship", "emergency")
EMERGENCY_CONSENT = "emergency"

CALL_WINDOW_START = time(8, 0)  # inclusive, callee's local time
CALL_WINDOW_END = time(21, 0)  # exclusive
SEARCH_HORIZON = timedelta(hours=48)
# The call request's fields an error names (its ``loc``); the caller prefixes where the request sits.
TO: list[str | int] = ["to"]
CONSENT: list[str | int] = ["consent_type"]

# [0-9], not \d: \d matches other scripts' digits, which phonenumbers would happily parse.
_E164 = re.compile(r"\+[1-9][0-9]{1,14}")
_NANP_N11 = re.compile(r"[2-9]11")
_UNKNOWN_ZONE = "Etc/Unknown"
# Premium rate pays the callee per minute: the toll-fraud vector, refused. Shared-cost lines
# (AU 1300, BR 4004, DE 0180) are ordinary business service numbers near local rates: allowed.
REFUSED_NUMBER_TYPES = {PhoneNumberType.PREMIUM_RATE: "premium-rate"}


@dataclass(frozen=True, slots=True)
class Destination:
    """A number that passed the format rules. ``time_zones`` is empty when its zones are unknown."""

    e164: str
    region: str | None
    time_zones: tuple[str, ...]


def parse_destination(raw: str) -> Destination:
    """Checks in order: strict shape, known country code, NANP N11 (911 is reported as emergency),
    emergency codes of every region sharing the country code, validity, canonical form, premium rate."""
    if not isinstance(raw, str) or _E164.fullmatch(raw) is None:
        raise InvalidE164Error(
            "a destination must be an E.164 number: '+' then 2 to 15 ASCII digits, the first not 0, and nothing else",
            loc=TO, input=raw,
        )
    try:
        number = phonenumbers.parse(raw, None)
    except phonenumbers.NumberParseException:
        raise InvalidE164Error(f"{raw} is not a phone number of any known country code", loc=TO, input=raw) from None
    country = number.country_code
    national = raw[1 + len(str(country)):]
    if country == 1 and _NANP_N11.match(national):
        if national.startswith("911"):
            raise EmergencyNumberError(f"{raw} is the emergency number 911 and cannot be called", loc=TO, input=raw)
        raise N11NumberError(f"{raw} is the N11 service code {national[:3]} and cannot be called", loc=TO, input=raw)
    if is_emergency(country, national):
        raise EmergencyNumberError(f"{raw} is an emergency number and cannot be called", loc=TO, input=raw)
    # The number's type is what is_valid_number, number_type and time_zones_for_number each work
    # out again (matching the number against every region of its country code): found once here.
    kind = phonenumbers.number_type(number)
    if kind == PhoneNumberType.UNKNOWN:  # exactly is_valid_number's answer
        raise InvalidE164Error(f"{raw} is not a valid phone number", loc=TO, input=raw)
    if phonenumbers.format_number(number, PhoneNumberFormat.E164) != raw:
        raise InvalidE164Error(f"{raw} is not in canonical E.164 form", loc=TO, input=raw)
    surcharge = REFUSED_NUMBER_TYPES.get(kind)
    if surcharge is not None:
        raise PremiumNumberError(f"{raw} is a {surcharge} number and cannot be called", loc=TO, input=raw)
    region = phonenumbers.region_code_for_number(number)
    if phonenumbers.is_number_type_geographical(kind, country):
        zones = time_zones_for_geographical_number(number)
    else:  # mobile, toll-free, ...: the zones of the whole country code
        zones = _country_zones(country, number)
    return Destination(
        e164=raw,
        # "001" is the library's code for non-geographic numbers (+800, +870, +882, ...).
        region=region if region and region != phonenumbers.UNKNOWN_REGION and region != "001" else None,
        time_zones=tuple(z for z in zones if z != _UNKNOWN_ZONE and _zone(z)),
    )


def is_emergency(country: int, national: str) -> bool:
    """``phonenumbers.is_emergency_number(national, region)`` for any region of the country code,
    for a national number of ASCII digits: its emergency pattern matches the whole number. The
    patterns are gathered once per country code (+1 has 25 regions)."""
    return any(pattern.fullmatch(national) for pattern in _emergency_patterns(country))


@functools.cache
def _emergency_patterns(country: int) -> tuple[re.Pattern[str], ...]:
    patterns = []
    for region in phonenumbers.region_codes_for_country_code(country):
        metadata = PhoneMetadata.short_metadata_for_region(region, None)
        emergency = metadata.emergency if metadata is not None else None
        if emergency is not None and emergency.national_number_pattern:
            patterns.append(re.compile(emergency.national_number_pattern))
    return tuple(patterns)


_COUNTRY_ZONES: dict[int, tuple[str, ...]] = {}


def _country_zones(country: int, number: phonenumbers.PhoneNumber) -> tuple[str, ...]:
    """What ``time_zones_for_number`` gives a number of a non-geographic type: a function of the
    country code alone, so worked out once per country code."""
    zones = _COUNTRY_ZONES.get(country)
    if zones is None:
        zones = _COUNTRY_ZONES[country] = tuple(time_zones_for_number(number))
    return zones


def check_consent(consent_type: str | None) -> None:
    if consent_type is None or (isinstance(consent_type, str) and not consent_type.strip()):
        raise ConsentMissingError(f"consent_type is required: one of {', '.join(CONSENT_TYPES)}",
                                  loc=CONSENT, input=consent_type)
    if consent_type not in CONSENT_TYPES:
        raise InvalidConsentTypeError(
            f"consent_type {consent_type!r} is not one of {', '.join(CONSENT_TYPES)}", loc=CONSENT, input=consent_type,
        )


def check_call_hours(destination: Destination, consent_type: str, now: datetime) -> None:
    """08:00–21:00 in every zone of the number; ``emergency`` consent skips this check only."""
    _require_aware(now)
    if consent_type == EMERGENCY_CONSENT:
        return
    zones = _zones(destination)
    if not zones:
        raise CallHoursUnknownError(
            f"the local time of {destination.e164} cannot be determined, so call hours "
            "(08:00-21:00 in the callee's local time) cannot be checked", loc=TO, input=destination.e164,
        )
    local_times = tuple((zone.key, now.astimezone(zone)) for zone in zones)
    closed = [(name, local) for name, local in local_times if not _inside(local)]
    if not closed:
        return
    shown = ", ".join(f"{local:%H:%M} in {name}" for name, local in closed[:3])
    if len(closed) > 3:
        shown += f" and {len(closed) - 3} more of this number's time zones"
    next_at = next_allowed_time(destination, now)
    hint = f"; the next allowed time is {next_at:%Y-%m-%dT%H:%M:%SZ}" if next_at else ""
    raise OutsideCallHoursError(
        f"outside call hours: it is {shown}; calls are allowed 08:00-21:00 in the callee's "
        f"local time, in every time zone of the number{hint}",
        local_times=local_times,
        next_allowed_at=next_at,
        loc=TO,
        input=destination.e164,
    )


def next_allowed_time(destination: Destination, now: datetime) -> datetime | None:
    """Earliest instant >= now (in UTC) when every zone is inside the window, within 48 h; else None.

    Jumps from one zone opening to the next instead of stepping minute by minute: a zone that is
    closed at ``t`` stays closed until its next 08:00, so no earlier instant can qualify.
    """
    _require_aware(now)
    zones = _zones(destination)
    if not zones:
        return None
    start = now.astimezone(timezone.utc)
    t = start
    while t <= start + SEARCH_HORIZON:
        closed = [zone for zone in zones if not _inside(t.astimezone(zone))]
        if not closed:
            return t
        t = max(_next_opening(t, zone) for zone in closed)
    return None


def _next_opening(t: datetime, zone: ZoneInfo) -> datetime:
    local = t.astimezone(zone)
    day = local.date() if local.time() < CALL_WINDOW_START else local.date() + timedelta(days=1)
    opening = datetime.combine(day, CALL_WINDOW_START, tzinfo=zone).astimezone(timezone.utc)
    # A zone whose clocks jump over 08:00 would give an opening in the past: step a minute.
    return opening if opening > t else t + timedelta(minutes=1)


def _inside(local: datetime) -> bool:
    return CALL_WINDOW_START <= local.time() < CALL_WINDOW_END


def _zones(destination: Destination) -> list[ZoneInfo]:
    return [zone for name in destination.time_zones if (zone := _zone(name)) is not None]


# ZoneInfo keeps only 8 zones strongly cached; a toll-free number alone has 42.
@functools.lru_cache(maxsize=1024)
def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")


def country_of(e164: str) -> str | None:
    """The ISO 3166 region of a number (``GB``), or the main region of its country code when no
    region's plan matches it; None for text that is no phone number (analytics' country)."""
    try:
        number = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException:
        return None
    region = phonenumbers.region_code_for_number(number)
    if region in (None, "ZZ", "001"):
        region = phonenumbers.region_code_for_country_code(number.country_code)
    return None if region in (None, "ZZ", "001") else region
