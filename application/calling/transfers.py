"""Transferring a live call to a person (SPEC.md ``transfer_call``): point the carrier at the
transfer instructions, then dial the number's destinations in turn until one answers. When none
does, the call ends, unless a flow's transfer step has an outgoing edge (SPEC.md Flow): the agent's
voice socket then opens again and the flow goes on at that edge's step (``Call.transfer_fallback``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from application import logs

from application.calling import callbacks
from application.calling.app import Calling
from application.calling.carrier_reports import TransferLegReport
from application.calling.instructions import Dial, Hangup, Instruction, Say
from application.calling.live import account_of_call, change
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError
from domain.calls.call import Call
from domain.calls.transfer import COMPLETED as TRANSFER_COMPLETED

log = logs.get_logger(__name__)

NO_ONE_AVAILABLE = "Sorry, nobody could take the call right now. Goodbye."
BRIEF_CHARS = 200  # of the agent's brief carried in the signed transfer URLs and whispered


def start_transfer(calling: Calling, call_id: str, destinations: list[dict[str, str]], max_attempts: int,
                   brief: str, *, step: str | None = None, answers: Mapping[str, Any] | None = None) -> bool:
    """The agent asked to transfer (from a flow's ``step``, with the flow's ``answers`` so far): record
    it, then point the carrier at the transfer instructions."""
    call = change(calling, call_id, lambda c: c.request_transfer(destinations, max_attempts, brief,
                                                                  calling.ports.clock(), step=step, answers=answers))
    if call is None or call.carrier_sid is None:
        return False
    account = account_of_call(calling, call)
    if account is None:
        return False
    try:
        calling.live.carrier.redirect(account, call.carrier_sid,
                                           calling.live.url("transfer", call_id, transfer_query(0, brief)))
    except (CarrierRefusedError, CarrierUnreachableError) as exc:
        log.warning("call.transfer_redirect_failed", call_id=call_id, reason=str(exc))
        change(calling, call_id, lambda c: c.transfer_leg_ended(0, "failed", calling.ports.clock()))
        return False
    return True


def transfer_query(dest: int, brief: str) -> str:
    """The transfer callback's query (SPEC.md Carrier callbacks): the destination to dial next and the
    brief whispered to whoever answers; both are inside the URL the carrier signs."""
    return f"dest={dest}&brief={quote(brief[:BRIEF_CHARS])}"


def destination_index(dest: str) -> int | None:
    """``dest`` as the carrier sent it back: a non-negative index, else None (nothing is dialled)."""
    text = dest.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 3 else None


def transfer_instructions(calling: Calling, call: Call, leg: TransferLegReport | None, *, dest: str = "0",
                          brief: str = "") -> list[Instruction]:
    """The transfer callback: ``dest`` is the index of the call's destination to dial now (``dest`` - 1
    is the leg whose result ``leg`` reports, if any), ``brief`` what the person who answers hears
    before the call is bridged. A ``dest`` past the destinations or the attempts dials nothing: the
    call ends, or goes back to the agent at the flow's fallback step."""
    index = destination_index(dest)
    if index is None:
        log.warning("call.transfer_dest_invalid", call_id=call.call_id, dest=dest[:20])
    if leg is not None and call.transfer is not None and index:
        status = "completed" if leg.answered else leg.status
        changed = change(calling, call.call_id, lambda c: c.transfer_leg_ended(index - 1, status, calling.ports.clock()))
        call = changed or calling.find(Call, Call.create_id(call.call_id)) or call
    if call.transfer is None:
        return [Hangup()]
    if call.transfer.status == TRANSFER_COMPLETED:
        return [Hangup()]
    following = None if index is None else call.transfer_destination(index)
    if following is None and call.resuming:
        return callbacks.voice_instructions(calling, call)
    if following is None:
        return [Say(NO_ONE_AVAILABLE), Hangup()]
    target = call.transfer.destinations[following]
    live = calling.live
    # An inbound call its number transferred without the agent is recorded from the bridge (one the
    # agent took is recorded from its voice session: inbound.start_recording).
    recorded = call.record_inbound and call.route_action == "transfer"
    whisper = brief.strip()[:BRIEF_CHARS]
    return [Dial(number=target.e164, action_url=live.url("transfer", call.call_id, transfer_query(following + 1, whisper)),
                 whisper_url=live.url("whisper", call.call_id, f"brief={quote(whisper)}") if whisper else None,
                 recording_url=live.url("recording", call.call_id) if recorded else None)]


def whisper_instructions(brief: str) -> list[Instruction]:
    """What the person who answers a transfer hears before being bridged: the brief, once."""
    text = brief.strip()[:BRIEF_CHARS]
    return [Say(text)] if text else []
