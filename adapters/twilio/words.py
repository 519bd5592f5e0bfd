"""Twilio's status and answering-machine words mapped to the service's (``carrier_reports``)."""

from __future__ import annotations

from application.calling.carrier_reports import ANSWERED_BY

_CALL_STATUSES = {
    "queued": "queued", "initiated": "initiated", "ringing": "ringing", "in-progress": "in_progress",
    "answered": "answered", "completed": "completed", "busy": "busy", "no-answer": "no_answer",
    "failed": "failed", "canceled": "canceled",
}
# DialCallStatus of a <Dial> leg: ``answered`` is reported by some call flows for a bridged leg.
_DIAL_STATUSES = {"completed": "completed", "answered": "completed", "busy": "busy", "no-answer": "no_answer",
                  "failed": "failed", "canceled": "canceled"}


def call_status(word: str) -> str:
    """A CallStatus in the service's words; ``unknown`` for a word Twilio does not document."""
    return _CALL_STATUSES.get(word.strip().lower(), "unknown")


def dial_status(word: str) -> str:
    """A DialCallStatus: ``completed`` when the leg was answered, else why not (``failed`` if unsaid)."""
    return _DIAL_STATUSES.get(word.strip().lower(), "failed")


def answered_by(word: str) -> str:
    """An AnsweredBy value (Twilio's words are the service's); anything else is ``unknown``."""
    return word if word in ANSWERED_BY else "unknown"
