"""``TwilioEdge``: the ``CarrierEdge`` port for Twilio's signed callbacks. Checks
``X-Twilio-Signature`` with the SDK's ``RequestValidator`` and the ``AccountSid`` the callback
names, reads the callback forms into reports in the service's words, and renders TwiML.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from twilio.request_validator import RequestValidator

from adapters.twilio import twiml
from adapters.twilio.words import answered_by, call_status, dial_status
from application.calling.carrier_reports import (
    FINAL_STATUSES,
    CallStatusReport,
    FormPairs,
    InboundCallReport,
    MachineVerdict,
    RecordingReport,
    TransferLegReport,
    VoicemailReport,
)
from application.calling.instructions import Instruction


class TwilioEdge:
    media_type = twiml.MEDIA_TYPE

    def verify(self, auth_token: str, account_sid: str, url: str, form: FormPairs, signature: str | None) -> bool:
        if not signature:
            return False
        if not RequestValidator(auth_token).validate(url, _MultiValues(form), signature):
            return False
        # AccountSid is a form field of a POST; a GET (TwiML fetched with method GET) carries it in the query.
        sids = ([value for key, value in form if key == "AccountSid"]
                or [value for key, value in parse_qsl(urlsplit(url).query) if key == "AccountSid"])
        return sids == [account_sid]

    def read_status(self, form: FormPairs) -> CallStatusReport | MachineVerdict | None:
        # Asynchronous answering-machine detection posts to the status URL too: AnsweredBy marks it.
        values = _first(form)
        if values.get("AnsweredBy"):
            return MachineVerdict(answered_by=answered_by(values["AnsweredBy"]))
        word = values.get("CallStatus") or ""
        if not word:
            return None
        status = call_status(word)
        if status not in FINAL_STATUSES and status != "unknown":
            return CallStatusReport(status=status, final=False)
        reported = values.get("CallDuration") or ""
        # A final word Twilio does not document still ends the call: as a plain completion.
        return CallStatusReport(status="completed" if status == "unknown" else status, final=True,
                                duration_seconds=int(reported) if reported.isdigit() else 0)

    def read_recording(self, form: FormPairs) -> RecordingReport:
        values = _first(form)
        url = values.get("RecordingUrl") or ""
        if url and not url.endswith(".mp3"):
            url += ".mp3"  # the media URL without an extension serves WAV; .mp3 asks for MP3
        return RecordingReport(url=url, sid=values.get("RecordingSid") or "",
                               completed=(values.get("RecordingStatus") or "completed") == "completed")

    def read_transfer(self, form: FormPairs) -> TransferLegReport | None:
        word = _first(form).get("DialCallStatus") or ""
        if not word:
            return None
        status = dial_status(word)
        return TransferLegReport(answered=status == "completed", status=status)

    def read_inbound(self, form: FormPairs) -> InboundCallReport:
        values = _first(form)
        return InboundCallReport(to=values.get("To") or "", from_number=values.get("From") or "",
                                 carrier_sid=values.get("CallSid") or "")

    def read_keypad(self, form: FormPairs) -> str:
        return _first(form).get("Digits") or ""

    def read_voicemail(self, form: FormPairs) -> VoicemailReport:
        values = _first(form)
        reported = values.get("RecordingDuration") or ""
        recording = self.read_recording(form)
        return VoicemailReport(url=recording.url, sid=recording.sid,
                               duration_seconds=int(reported) if reported.isdigit() else 0)

    def read_transcript(self, form: FormPairs) -> str | None:
        values = _first(form)
        if (values.get("TranscriptionStatus") or "completed") != "completed":
            return None
        return values.get("TranscriptionText") or ""

    def render(self, *instructions: Instruction) -> str:
        return twiml.render(*instructions)


def _first(form: FormPairs) -> dict[str, str]:
    """The first value of each key."""
    values: dict[str, str] = {}
    for key, value in form:
        values.setdefault(key, value)
    return values


class _MultiValues(dict):  # type: ignore[type-arg]
    """Form pairs with repeated keys kept, in the shape ``RequestValidator`` reads (``getall``)."""

    def __init__(self, pairs: FormPairs) -> None:
        super().__init__()
        for key, value in pairs:
            self.setdefault(key, []).append(value)

    def getall(self, key: str) -> list[str]:
        return list(self[key])
