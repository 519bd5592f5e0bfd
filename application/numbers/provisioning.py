"""What managed numbers need from outside: a carrier account of the service's own that searches,
buys and releases numbers (``NumberProvisioner``), and where the bought numbers send their traffic.

Refusals and outages are the carrier port's ``CarrierRefusedError`` / ``CarrierUnreachableError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class NumberProvisioner(Protocol):
    def search(self, area_code: str) -> list[str]:
        """E.164 numbers on sale in ``area_code`` (a few, best first); none: an empty list."""
        ...

    def purchase(self, e164: str, voice_url: str, sms_url: str, *, tag: str | None = None) -> str:
        """Buy ``e164`` with its inbound calls and texts sent to these URLs; the carrier's id of it.
        ``CarrierRefusedError`` when the carrier said no (e.g. sold meanwhile). ``tag``: kept on the
        number at the carrier (its friendly name), so that ``tagged`` finds it again."""
        ...

    def tagged(self, tag: str) -> list[tuple[str, str]]:
        """The account's numbers bought with ``tag``, as (E.164, the carrier's id); none: empty."""
        ...

    def release(self, provider_sid: str) -> None:
        """Give the number back to the carrier; one already gone is no error."""
        ...


@dataclass(frozen=True, kw_only=True)
class ManagedNumbering:
    """The managed sub-account's provisioner and the service's inbound URLs for voice and SMS (the
    account's calls and texts go through ``LivePorts.managed``)."""

    provisioner: NumberProvisioner
    voice_url: str
    sms_url: str
