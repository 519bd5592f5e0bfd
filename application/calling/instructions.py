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
    recording_url: str | None = None  # record the bridged call, reporting the recording here
    whisper_url: str | None = None  # what the person who answers hears before the bridge (the brief)


@dataclass(frozen=True, kw_only=True)
class Gather:
    """Ask for one keypad key while ``prompt`` is spoken; the key (or none, after ``wait_seconds``)
    is posted to ``action_url``."""

    prompt: str
    action_url: str
    wait_seconds: int = 5


@dataclass(frozen=True, kw_only=True)
class Record:
    """Record the caller's message (at most ``max_seconds``) after a beep: the recording is posted to
    ``action_url``, its text later to ``transcript_url``."""

    action_url: str
    transcript_url: str
    max_seconds: int = 120


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Hangup:
    pass


Instruction = ConnectVoice | Dial | Gather | Record | Say | Hangup
