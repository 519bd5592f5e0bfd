"""What a carrier's signed callbacks say, in the service's own words, and the ``CarrierEdge`` port
that checks their signature, reads them and renders the instructions the carrier follows.

Carrier-neutral: no carrier's form keys or status spellings beyond this line (the adapter maps them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from application.calling.instructions import Instruction

# A call's lifecycle as the carrier reports it: progress, then one final status.
PROGRESS_STATUSES = ("queued", "initiated", "ringing", "in_progress", "answered")
FINAL_STATUSES = ("completed", "busy", "no_answer", "failed", "canceled")
# Who answered, as answering-machine detection says (``no_answer``: silence).
ANSWERED_BY = ("human", "unknown", "machine_start", "machine_end_beep", "machine_end_silence",
               "machine_end_other", "fax", "no_answer")

FormPairs = Sequence[tuple[str, str]]


@dataclass(frozen=True, kw_only=True)
class SignedCallback:
    """A callback as it arrived: the public URL it was sent to (query included), every form pair
    in order (repeated keys kept) and the carrier's signature, if any."""

    url: str
    form: FormPairs
    signature: str | None


@dataclass(frozen=True, kw_only=True)
class CallStatusReport:
    """Lifecycle progress (``final`` False, a ``PROGRESS_STATUSES`` word) or the call's final status
    (a ``FINAL_STATUSES`` word, with the billed duration)."""

    status: str
    final: bool
    duration_seconds: int = 0


@dataclass(frozen=True, kw_only=True)
class MachineVerdict:
    """Answering-machine detection's verdict (an ``ANSWERED_BY`` word)."""

    answered_by: str


@dataclass(frozen=True, kw_only=True)
class RecordingReport:
    url: str  # the carrier's media URL of the audio file; empty when the callback named none
    sid: str
    completed: bool


@dataclass(frozen=True, kw_only=True)
class TransferLegReport:
    """How one dialled transfer destination ended: ``answered``, else busy, no_answer, failed, canceled."""

    answered: bool
    status: str  # ``completed`` when answered


@dataclass(frozen=True, kw_only=True)
class VoicemailReport:
    """The caller's recorded message (``url`` empty when nothing was recorded) and its length."""

    url: str
    sid: str
    duration_seconds: int


@dataclass(frozen=True, kw_only=True)
class InboundCallReport:
    to: str
    from_number: str
    carrier_sid: str


class CarrierEdge(Protocol):
    """One carrier's callback protocol: signatures, callback forms and its instruction documents."""

    media_type: str  # of ``render``'s documents

    def verify(self, auth_token: str, account_sid: str, url: str, form: FormPairs, signature: str | None) -> bool:
        """Did the account with this token sign the callback (the exact URL and every form pair), and
        does the callback name ``account_sid`` as its account?"""
        ...

    def read_status(self, form: FormPairs) -> CallStatusReport | MachineVerdict | None:
        """A status callback: a verdict, a lifecycle status, or None when it says neither."""
        ...

    def read_recording(self, form: FormPairs) -> RecordingReport: ...

    def read_transfer(self, form: FormPairs) -> TransferLegReport | None:
        """The result of the last dialled transfer leg; None on the first transfer request."""
        ...

    def read_inbound(self, form: FormPairs) -> InboundCallReport: ...

    def read_keypad(self, form: FormPairs) -> str:
        """The keys the caller pressed when asked (empty: none in time)."""
        ...

    def read_voicemail(self, form: FormPairs) -> VoicemailReport: ...

    def read_transcript(self, form: FormPairs) -> str | None:
        """A recorded message as text; None when the carrier could not transcribe it."""
        ...

    def render(self, *instructions: Instruction) -> str:
        """The document that tells the carrier to follow ``instructions`` in order."""
        ...
