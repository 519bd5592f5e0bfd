"""Post-call SMS (SPEC.md Number ``sms_enabled``, ``sms_templates``): after a call on a number
that sends texts ends, each template whose condition holds on the call's outcome is rendered and
sent once from the number to the other party, and shown on the call record (``sms``).

The line of a call: an inbound call's number (``metadata.number_id``), or the tenant's number an
outbound call was placed from. The other party: the caller of an inbound call, the callee of an
outbound one. Exactly once: the call's messages are claimed in the commit that opens its
``CallSms`` (``domain/calls/sms.py``) before the carrier is asked, so a reactor that sees the
call's end twice sends nothing more; a process that dies between the claim and the carrier's
answer leaves the message ``sending`` (never sent twice). A send that fails on the carrier's side
is tried again, then recorded as failed; it never changes the call.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from application import logs
from application.calling import live
from application.calling.app import Calling
from application.errors import ConflictError
from application.numbers.lookups import number_called, tenant_number
from application.providers.ports import AccountAccess, CarrierRefusedError, CarrierUnreachableError
from domain.calls.call import Call
from domain.calls.sms import CallSms
from domain.numbers import sms_templates
from domain.numbers.field_rules import E164_SHAPE
from domain.numbers.number import Number

log = logs.get_logger(__name__)

# After a send the carrier did not answer: the pauses before the next tries; then it has failed.
RETRY_PAUSES = (1.0, 4.0)


def line_of(calling: Calling, call: Call) -> Number | None:
    """The number whose settings apply to the call, if it is one of the tenant's active numbers."""
    if call.direction == "inbound":
        number = number_called(calling, call)
        return number if number is not None and number.active else None
    if call.mode != "live":
        return None  # a simulated call texts nobody
    return tenant_number(calling, call.tenant_id, call.from_number)


def send_post_call_sms(calling: Calling, call_id: str, *, sleep: Callable[[float], None] = time.sleep) -> int:
    """Send the messages the ended call's number owes it; how many this sent. A managed number
    texts from the service's own sub-account, any other from the tenant's."""
    call = calling.find(Call, Call.create_id(call_id))
    if call is None or not call.is_terminal:
        return 0
    number = line_of(calling, call)
    if number is None or not number.sms_enabled or not number.sms_templates:
        return 0
    other = call.from_number if call.direction == "inbound" else call.to
    if not E164_SHAPE.fullmatch(other or ""):
        return 0  # a withheld or malformed caller: nobody to text
    outcome = call.outcome or call.partial_outcome or {}
    messages = sms_templates.messages_for(number.sms_templates, outcome, call_from=call.from_number,
                                          call_to=call.to, number_e164=number.e164)
    owed = [(template_id, other, body) for template_id, body in messages if template_id not in call.sms]
    if not owed or not _claimed(calling, CallSms.claim(call.tenant_id, call_id, owed, calling.ports.clock())):
        return 0
    account = live.account_of_number(calling, number)
    return sum(_send(calling, call_id, template_id, account, number.e164, to, body, sleep)
               for template_id, to, body in owed)


def _claimed(calling: Calling, sms: CallSms) -> bool:
    """Save the claim; False when another sender opened the call's SMS first."""
    try:
        calling.commit(sms)
    except ConflictError:
        return False
    return True


def _record(calling: Calling, call_id: str, apply: Callable[[CallSms], object]) -> None:
    calling.update(CallSms, CallSms.create_id(call_id), apply)


def _send(calling: Calling, call_id: str, template_id: str, account: AccountAccess | None, from_number: str,
          to: str, body: str, sleep: Callable[[float], None]) -> int:
    fields = {"call_id": call_id, "template_id": template_id}
    clock = calling.ports.clock
    if account is None:
        _record(calling, call_id, lambda s: s.failed(template_id, "no carrier account to send from", clock()))
        log.warning("sms.failed", **fields, error="no carrier account to send from")
        return 0
    carrier = calling.live.carrier
    for pause in (*RETRY_PAUSES, None):
        try:
            sid = carrier.send_sms(account, from_number=from_number, to=to, body=body)
        except CarrierRefusedError as exc:
            error = f"{exc.code}: {exc.message}"
        except CarrierUnreachableError as exc:
            error = str(exc) or "the carrier did not answer"
            if pause is not None:
                sleep(pause)
                continue
        else:
            _record(calling, call_id, lambda s: s.sent(template_id, sid, clock()))
            log.info("sms.sent", **fields)
            return 1
        _record(calling, call_id, lambda s: s.failed(template_id, error, clock()))
        log.warning("sms.failed", **fields, error=error)
        return 0
    return 0
