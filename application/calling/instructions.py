"""What the service tells the carrier to do next on a live call (rendered as TwiML by an adapter)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class ConnectVoice:
    """Open the call's voice socket: ``relay`` (text) or ``stream`` (audio), with the token."""

    transport: str
    socket_url: str
    parameters: dict[str, str] = field(default_factory=dict)
    language: str = "en-US"
    voice: str = ""


@dataclass(frozen=True, kw_only=True)
class Dial:
    number: str
    action_url: str
    ring_seconds: int = 20


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Hangup:
    pass


Instruction = ConnectVoice | Dial | Say | Hangup
