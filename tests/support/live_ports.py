"""``LivePorts`` for a ``Calling`` whose test runs no live call: the carrier, its callbacks' edge
and the credentials box are never reached, so they are absent; the rest is what a live call would
read (public URL, profiles)."""

from __future__ import annotations

from application.calling.live_ports import LivePorts
from domain.calls.engines import DEFAULT_PROFILES


def unused_live_ports() -> LivePorts:
    return LivePorts(carrier=None, edge=None, credentials=None, token_key=b"k" * 32,  # type: ignore[arg-type]
                     base_url="https://callwright.example", profiles=DEFAULT_PROFILES)
