"""The carrier's signed callbacks about a live call (ARCHITECTURE.md §7, §9), in report terms:
who signed it, the instructions that open the voice socket, lifecycle and answering-machine
reports, and the recording. The ``CarrierEdge`` port reads the carrier's protocol; nothing here
knows a form key or a carrier's status word.
"""

from __future__ import annotations

from application.calling.app import Calling
from application.calling.carrier_reports import CallStatusReport, MachineVerdict, RecordingReport, SignedCallback
from application.calling.dialing import hang_up
from application.calling.instructions import ConnectVoice, Hangup, Instruction
from application.calling.live import account_of_call, change
from application.errors import PermissionDeniedError
from application.providers.ports import AccountAccess
from domain.calls import stream_token
from domain.calls.call import Call


def signed_by(calling: Calling, account: AccountAccess | None, callback: SignedCallback) -> bool:
    """Did this carrier account sign the callback (its token over the exact URL and every form
    pair), and does the callback name that account? The account is the call's or the number's
    (``live.account_of_call``, ``live.account_of_number``): a tenant's own, or the service's
    managed sub-account."""
    if account is None or not callback.signature:
        return False
    return calling.live.edge.verify(account.auth_token, account.account_sid, callback.url, callback.form,
                                         callback.signature)


def refused_callback() -> PermissionDeniedError:
    """One answer for every refused callback: nothing tells a prober which check failed."""
    return PermissionDeniedError("the carrier signature does not match", code="invalid_carrier_signature")


def verified_call(calling: Calling, call_id: str, callback: SignedCallback) -> Call:
    """The live call a carrier callback is about, once ``signed_by`` holds for the call's account; else 403."""
    try:
        call = calling.find(Call, Call.create_id(call_id))
    except ValueError:
        raise refused_callback() from None
    if call is None or call.mode != "live" or not signed_by(calling, account_of_call(calling, call), callback):
        raise refused_callback()
    return call


def voice_instructions(calling: Calling, call: Call, **parameters: str) -> list[Instruction]:
    """The answer to the instructions request: open the voice socket with a fresh single-use token
    (and any further ``parameters`` for the socket); again after a flow's transfer nobody answered."""
    if not call.may_open_session:
        return [Hangup()]
    live = calling.live
    profile = live.profile(call.voice_engine)
    token = stream_token.issue(live.token_key, call.call_id, calling.ports.clock(), live.token_seconds)
    return [ConnectVoice(transport=profile.transport, socket_url=live.socket_url(profile.transport, call.call_id),
                         parameters={"token": token, **parameters}, language=call.language, voice=profile.voice)]


def status_reported(calling: Calling, call: Call, report: CallStatusReport | MachineVerdict | None) -> None:
    """A lifecycle or answering-machine report. Terminal calls never move."""
    if report is None:
        return
    if isinstance(report, MachineVerdict):
        _verdict(calling, call, report.answered_by)
        return
    now = calling.ports.clock
    if not report.final:
        change(calling, call.call_id, lambda c: c.carrier_progressed(report.status, now()))
        return
    change(calling, call.call_id, lambda c: c.carrier_final(report.status, report.duration_seconds, now()))


def _verdict(calling: Calling, call: Call, answered_by: str) -> None:
    changed = change(calling, call.call_id, lambda c: c.machine_verdict(answered_by, calling.ports.clock()))
    if changed is not None and changed.is_terminal and changed.carrier_sid and changed.carrier_duration_seconds is None:
        hang_up(calling, changed)  # abandoned while the carrier still holds the line


def recording_ready(calling: Calling, call: Call, report: RecordingReport) -> None:
    if not report.completed or not report.url:
        return
    if not calling.live.media_url(report.url):
        return  # only the carrier's own media URL is stored (https, or its configured API server), never proxied
    change(calling, call.call_id, lambda c: c.attach_recording(report.url, report.sid, calling.ports.clock()))
