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
from application.calling.live import account_of_call, change, ports_of
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError
from domain.calls.call import Call

log = logs.get_logger(__name__)

NO_ONE_AVAILABLE = "Sorry, nobody could take the call right now. Goodbye."


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
        ports_of(calling).carrier.redirect(account, call.carrier_sid,
                                           ports_of(calling).url("transfer", call_id, f"dest=0&brief={quote(brief[:200])}"))
    except (CarrierRefusedError, CarrierUnreachableError) as exc:
        log.warning("call.transfer_redirect_failed", call_id=call_id, reason=str(exc))
        change(calling, call_id, lambda c: c.transfer_leg_ended(0, "failed", calling.ports.clock()))
        return False
    return True


def transfer_instructions(calling: Calling, call: Call, leg: TransferLegReport | None) -> list[Instruction]:
    """The transfer callback: the result of the last dialled leg (``leg``) if any, then the next
    destination, until one answers or the attempts are spent; then the call ends, or goes back to
    the agent at the flow's fallback step."""
    if leg is not None and call.transfer is not None:
        index = len(call.transfer["legs"])
        status = "completed" if leg.answered else leg.status
        changed = change(calling, call.call_id, lambda c: c.transfer_leg_ended(index, status, calling.ports.clock()))
        call = changed or calling.find(Call, Call.create_id(call.call_id)) or call
    if call.transfer is None:
        return [Hangup()]
    if call.transfer["status"] == "completed":
        return [Hangup()]
    following = call.next_transfer_destination()
    if following is None and call.resuming:
        return callbacks.voice_instructions(calling, call)
    if following is None:
        return [Say(NO_ONE_AVAILABLE), Hangup()]
    target = call.transfer["destinations"][following]
    live = ports_of(calling)
    # An inbound call its number transferred without the agent is recorded from the bridge (one the
    # agent took is recorded from its voice session: inbound.start_recording).
    recorded = call.record_inbound and call.route_action == "transfer"
    return [Dial(number=target["e164"], action_url=live.url("transfer", call.call_id, f"dest={following + 1}"),
                 recording_url=live.url("recording", call.call_id) if recorded else None)]
