"""Live calls over the tenant's carrier account (ARCHITECTURE.md §7-§9): dial at most once, follow
the carrier's signed callbacks, answer with instructions that open the voice socket, transfer,
and settle the call once its conversation is over.

Every change goes through ``Calling.update`` (re-read and re-applied on a conflict): the carrier's
callbacks, the voice socket and the reactors write the same call concurrently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qsl, quote, urlsplit

from application.calling.app import Calling
from application.calling.instructions import ConnectVoice, Dial, Hangup, Instruction, Say
from application.errors import ConflictError, PermissionDeniedError
from application.numbers.lookups import tenant_number
from application.ports import SecretBox
from application.providers.credentials import credential_of
from application.providers.ports import (
    AccountAccess,
    Carrier,
    CarrierRefusedError,
    CarrierUnreachableError,
    DialRequest,
)
from domain.calls import stream_token
from domain.calls.call import Call, CallStateError, abandon_code
from domain.calls.engines import DEFAULT_ENGINE, EngineProfile

log = logging.getLogger(__name__)

CALLBACK_PREFIX = "/webhooks/carrier"
# Final carrier statuses other than ``completed``, and the error code each ends the call with.
CARRIER_FAILURES = {"busy": "busy", "no-answer": "no_answer", "failed": "carrier_failed",
                    "canceled": "carrier_canceled"}
PROGRESS = ("queued", "initiated", "ringing", "in-progress", "answered")
ANSWERED_DIALS = ("completed", "answered")
NO_ONE_AVAILABLE = "Sorry, nobody could take the call right now. Goodbye."


@dataclass(frozen=True, kw_only=True)
class LivePorts:
    carrier: Carrier
    credentials: SecretBox  # unseals the tenants' carrier auth tokens
    token_key: bytes  # signs the per-call voice socket tokens
    base_url: str  # CALLWRIGHT_PUBLIC_BASE_URL: what the carrier calls back and signs
    profiles: Mapping[str, EngineProfile]
    record_calls: bool = True
    token_seconds: int = 300
    amd: bool = True

    def url(self, kind: str, call_id: str, query: str = "") -> str:
        return f"{self.base_url}{CALLBACK_PREFIX}/{kind}/{call_id}" + (f"?{query}" if query else "")

    def socket_url(self, transport: str, call_id: str) -> str:
        base = self.base_url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        return f"{base}{CALLBACK_PREFIX}/{transport}/{call_id}"

    def profile(self, engine: str) -> EngineProfile:
        return self.profiles.get(engine) or self.profiles[DEFAULT_ENGINE]


def ports_of(calling: Calling) -> LivePorts:
    if calling.live is None:
        raise RuntimeError("live calls are not wired in this process")
    return calling.live


def account_for(calling: Calling, tenant_id: str) -> AccountAccess | None:
    credential = credential_of(calling, tenant_id)
    if credential is None or not credential.verified:
        return None
    return AccountAccess(account_sid=credential.account_sid,
                         auth_token=ports_of(calling).credentials.open(credential.sealed_token))


def change(calling: Calling, call_id: str, apply: Callable[[Call], object]) -> Call | None:
    """Apply ``apply`` to the call (re-read and retried on conflicts); None when the call refuses it."""
    try:
        return calling.update(Call, Call.create_id(call_id), apply)
    except CallStateError:
        return None


# -- dialing ------------------------------------------------------------------------------------


def claim_dial(calling: Calling, call_id: str) -> Call | None:
    """Save ``DialRequested`` (the claim: optimistic concurrency lets one runner win) before the
    carrier is asked; None when the call is not queued any more."""
    call = calling.find(Call, Call.create_id(call_id))
    if call is None or call.status != "queued":
        return None
    call.request_dial(ports_of(calling).amd, calling.ports.clock())
    try:
        calling.commit(call)
    except ConflictError:
        return None
    return call


def dial(calling: Calling, call: Call) -> None:
    """Ask the carrier to place a claimed call. A refusal fails the call; an unknown answer leaves
    it to the reconciler, which looks the call up and never dials again."""
    live = ports_of(calling)
    account = account_for(calling, call.tenant_id)
    if account is None:
        change(calling, call.call_id, lambda c: c.fail("carrier_not_configured",
                                                        "the carrier credentials were removed", calling.ports.clock()))
        return
    record = live.record_calls and _number_records(calling, call)
    request = DialRequest(
        to=call.to, from_number=call.from_number, twiml_url=live.url("twiml", call.call_id),
        status_url=live.url("status", call.call_id),
        amd_url=live.url("status", call.call_id) if call.amd_requested else None,
        recording_url=live.url("recording", call.call_id) if record else None,
    )
    try:
        sid = live.carrier.dial(account, request)
    except CarrierRefusedError as exc:
        change(calling, call.call_id, lambda c: c.fail(exc.code if exc.code.startswith("carrier_") else "carrier_refused",
                                                        f"the carrier refused the call: {exc.message}",
                                                        calling.ports.clock()))
        return
    except CarrierUnreachableError as exc:
        log.warning("call.dial_unknown call_id=%s reason=%s", call.call_id, exc)
        return
    change(calling, call.call_id, lambda c: c.dialed(sid, calling.ports.clock()))


def _number_records(calling: Calling, call: Call) -> bool:
    """The caller number's ``recording_enabled`` when it is a configured number (default: on)."""
    number = tenant_number(calling, call.tenant_id, call.from_number)
    return number is None or bool(number.recording_enabled)


# -- callbacks ----------------------------------------------------------------------------------


def signed_by_tenant(calling: Calling, tenant_id: str, url: str, form: Sequence[tuple[str, str]],
                     signature: str | None) -> bool:
    """Did the tenant's carrier account sign this callback (its token over the exact URL and every
    form pair), and does its ``AccountSid`` (form, or query for a GET) name that account?"""
    account = account_for(calling, tenant_id)
    if account is None or not signature:
        return False
    if not ports_of(calling).carrier.valid_signature(account.auth_token, url, list(form), signature):
        return False
    sids = ([value for key, value in form if key == "AccountSid"]
            or [value for key, value in parse_qsl(urlsplit(url).query) if key == "AccountSid"])
    return sids == [account.account_sid]


def refused_callback() -> PermissionDeniedError:
    """One answer for every refused callback: nothing tells a prober which check failed."""
    return PermissionDeniedError("the carrier signature does not match", code="invalid_carrier_signature")


def verified_call(calling: Calling, call_id: str, url: str, form: Sequence[tuple[str, str]],
                  signature: str | None) -> Call:
    """The live call a carrier callback is about, once ``signed_by_tenant`` holds; else 403."""
    try:
        call = calling.find(Call, Call.create_id(call_id))
    except ValueError:
        raise refused_callback() from None
    if call is None or call.mode != "live" or not signed_by_tenant(calling, call.tenant_id, url, form, signature):
        raise refused_callback()
    return call


def voice_instructions(calling: Calling, call: Call, **parameters: str) -> list[Instruction]:
    """The answer to the TwiML request: open the voice socket with a fresh single-use token (and
    any further ``parameters`` for the socket)."""
    if call.is_terminal or call.session_state != "none":
        return [Hangup()]
    live = ports_of(calling)
    profile = live.profile(call.voice_engine)
    token = stream_token.issue(live.token_key, call.call_id, calling.ports.clock(), live.token_seconds)
    return [ConnectVoice(transport=profile.transport, socket_url=live.socket_url(profile.transport, call.call_id),
                         parameters={"token": token, **parameters}, language=call.language, voice=profile.voice)]


def status_changed(calling: Calling, call: Call, form: Mapping[str, str]) -> None:
    """A lifecycle or answering-machine callback. Terminal calls never move."""
    now = calling.ports.clock
    answered_by = form.get("AnsweredBy")
    if answered_by:
        _verdict(calling, call, answered_by)
    status = (form.get("CallStatus") or "").lower()
    if not status or answered_by:
        return
    if status in PROGRESS:
        change(calling, call.call_id, lambda c: c.carrier_progressed(status, now()))
        return
    reported = form.get("CallDuration") or ""
    duration = int(reported) if reported.isdigit() else 0

    def ended(c: Call) -> None:
        if not c.carrier_ended(status, duration, now()):
            return
        if status in CARRIER_FAILURES:
            c.fail(CARRIER_FAILURES[status], f"the carrier reported {status}", now())
        elif c.session_state == "none" and c.transfer is None:
            c.fail("hung_up", "the call ended before the conversation started", now())

    change(calling, call.call_id, ended)


def _verdict(calling: Calling, call: Call, answered_by: str) -> None:
    now = calling.ports.clock

    def record(c: Call) -> None:
        if c.is_terminal or c.answered_by is not None:
            return
        if not c.answer(answered_by, now()):
            c.fail(abandon_code(answered_by), f"answered by {answered_by}; the call was abandoned", now())
        elif answered_by == "no_answer":
            c.fail("no_answer", "nobody answered (silence)", now())

    changed = change(calling, call.call_id, record)
    if changed is not None and changed.is_terminal and changed.carrier_sid and changed.carrier_duration_seconds is None:
        hang_up(calling, changed)


def hang_up(calling: Calling, call: Call) -> None:
    account = account_for(calling, call.tenant_id)
    if account is None or call.carrier_sid is None:
        return
    try:
        ports_of(calling).carrier.hang_up(account, call.carrier_sid)
    except (CarrierRefusedError, CarrierUnreachableError) as exc:
        log.warning("call.hang_up_failed call_id=%s reason=%s", call.call_id, exc)


def recording_ready(calling: Calling, call: Call, form: Mapping[str, str]) -> None:
    if (form.get("RecordingStatus") or "completed") != "completed" or not form.get("RecordingUrl"):
        return
    url = form["RecordingUrl"]
    if not url.startswith("https://"):
        return  # only the carrier's own https media URL is stored, never proxied
    url = url if url.endswith(".mp3") else url + ".mp3"
    change(calling, call.call_id, lambda c: c.attach_recording(url, form.get("RecordingSid") or "", calling.ports.clock()))


# -- transfers ----------------------------------------------------------------------------------


def start_transfer(calling: Calling, call_id: str, destinations: list[dict[str, str]], max_attempts: int,
                   brief: str) -> bool:
    """The agent asked to transfer: record it, then point the carrier at the transfer instructions."""
    call = change(calling, call_id, lambda c: c.request_transfer(destinations, max_attempts, brief,
                                                                  calling.ports.clock()))
    if call is None or call.carrier_sid is None:
        return False
    account = account_for(calling, call.tenant_id)
    if account is None:
        return False
    try:
        ports_of(calling).carrier.redirect(account, call.carrier_sid,
                                           ports_of(calling).url("transfer", call_id, f"dest=0&brief={quote(brief[:200])}"))
    except (CarrierRefusedError, CarrierUnreachableError) as exc:
        log.warning("call.transfer_redirect_failed call_id=%s reason=%s", call_id, exc)
        change(calling, call_id, lambda c: c.transfer_leg_ended(0, "failed", calling.ports.clock()))
        return False
    return True


def transfer_instructions(calling: Calling, call: Call, form: Mapping[str, str]) -> list[Instruction]:
    """The transfer callback: the result of the last ``<Dial>`` (``DialCallStatus``) if any, then
    the next destination, until one answers or the attempts are spent."""
    dial_status = (form.get("DialCallStatus") or "").lower()
    if dial_status and call.transfer is not None:
        index = len(call.transfer["legs"])
        status = "completed" if dial_status in ANSWERED_DIALS else dial_status
        changed = change(calling, call.call_id, lambda c: c.transfer_leg_ended(index, status, calling.ports.clock()))
        call = changed or calling.find(Call, Call.create_id(call.call_id)) or call
    if call.transfer is None:
        return [Hangup()]
    if call.transfer["status"] == "completed":
        return [Hangup()]
    following = call.next_transfer_destination()
    if following is None:
        return [Say(NO_ONE_AVAILABLE), Hangup()]
    target = call.transfer["destinations"][following]
    live = ports_of(calling)
    return [Dial(number=target["e164"], action_url=live.url("transfer", call.call_id, f"dest={following + 1}"))]


# -- settling -----------------------------------------------------------------------------------


def live_duration(call: Call) -> int:
    if call.carrier_duration_seconds:
        return call.carrier_duration_seconds
    if call.session_opened_at and call.session_closed_at:
        return max(1, round((call.session_closed_at - call.session_opened_at).total_seconds()))
    return 0


def overdue_dial(call: Call, now, after: timedelta) -> bool:  # type: ignore[no-untyped-def]
    return (call.dial_requested_at is not None and call.carrier_sid is None
            and now - call.dial_requested_at >= after)
