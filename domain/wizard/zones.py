"""The time zone a wizard configuration reads its opening hours in, guessed from the places a
business description names (the hours need one: docs/numbers.md ``timezone_required``). Pure."""

from __future__ import annotations

import re

DEFAULT_ZONE = "America/New_York"

# Place names, matched as whole words, case-insensitive; the first zone with a match wins.
ZONE_HINTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("America/Phoenix", ("arizona", "phoenix", "tucson", "scottsdale")),
    ("America/Los_Angeles", ("california", "los angeles", "san francisco", "san diego", "san jose", "oakland",
                             "sacramento", "seattle", "washington state", "oregon", "portland", "nevada",
                             "las vegas", "pacific time")),
    ("America/Denver", ("colorado", "denver", "boulder", "utah", "salt lake", "montana", "wyoming", "new mexico",
                        "albuquerque", "idaho", "boise", "mountain time")),
    ("America/Chicago", ("chicago", "illinois", "texas", "houston", "dallas", "austin", "san antonio",
                         "minnesota", "minneapolis", "wisconsin", "milwaukee", "missouri", "st. louis",
                         "kansas", "iowa", "oklahoma", "louisiana", "new orleans", "nashville", "tennessee",
                         "alabama", "mississippi", "arkansas", "nebraska", "central time")),
    ("America/Anchorage", ("alaska", "anchorage")),
    ("Pacific/Honolulu", ("hawaii", "honolulu")),
    ("America/Toronto", ("toronto", "ontario", "ottawa", "montreal", "quebec")),
    ("America/Vancouver", ("vancouver", "british columbia")),
    ("Europe/London", ("london", "england", "scotland", "wales", "manchester", "united kingdom")),
    ("Europe/Dublin", ("dublin", "ireland")),
    ("Australia/Sydney", ("sydney", "new south wales")),
)
_PATTERNS = tuple((zone, re.compile(r"\b(?:" + "|".join(re.escape(p) for p in places) + r")\b", re.IGNORECASE))
                  for zone, places in ZONE_HINTS)


def zone_for(description: str) -> str:
    """An IANA zone for the places named; ``DEFAULT_ZONE`` when none is."""
    for zone, pattern in _PATTERNS:
        if pattern.search(description):
            return zone
    return DEFAULT_ZONE
