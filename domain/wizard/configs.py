"""The offline wizard's configurations: one per business class of ``compliance.py`` (and one for a
business no class names), each a Number configuration that ``PATCH /v1/numbers/{id}`` accepts as
it is (docs/wizard.md). Transfer destinations stay empty: only the business knows its numbers.

Pure: the standard library and the wizard's other rules.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from domain.wizard.compliance import GENERAL
from domain.wizard.zones import zone_for

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")
HOURS: dict[str, dict[str, list[list[str]]]] = {
    "office": {day: [["09:00", "17:00"]] for day in WEEKDAYS},
    "trades": {**{day: [["08:00", "18:00"]] for day in WEEKDAYS}, "sat": [["09:00", "13:00"]]},
    "shop": {day: [["10:00", "18:00"]] for day in (*WEEKDAYS, "sat")},
    "restaurant": {day: [["11:00", "22:00"]] for day in ("tue", "wed", "thu", "fri", "sat", "sun")},
    "salon": {day: [["09:00", "19:00"]] for day in ("tue", "wed", "thu", "fri", "sat")},
    "gym": {**{day: [["06:00", "21:00"]] for day in WEEKDAYS}, **{day: [["08:00", "18:00"]] for day in ("sat", "sun")}},
    "always": {day: [["00:00", "24:00"]] for day in (*WEEKDAYS, "sat", "sun")},
}
VOICEMAIL_SCHEMA: dict[str, Any] = {
    "message": {"type": "string", "description": "What the caller said, in a sentence or two"},
    "caller_name": {"type": "string", "optional": True},
    "callback_number": {"type": "string", "optional": True, "description": "A number to call back, if given"},
}
PERSONA = ("Warm, calm and brief. Speaks plainly, one question at a time, and never makes up prices, "
           "availability or facts about the business: what it does not know, it notes for the team.")
CALLER_NAME = {"type": "string", "optional": True, "description": "The caller's name, if given"}
SUMMARY = {"type": "string", "description": "What the caller wanted and what was agreed"}
PREFERRED_TIME = {"type": "string", "optional": True, "description": "When the caller would like to come, in "
                                                                      "their words"}


@dataclass(frozen=True)
class Line:
    what: str  # how the greeting names the business
    objective: str
    outcome_schema: dict[str, Any]
    hours: str  # a key of HOURS
    sms: dict[str, Any]  # the one post-call SMS template


def _booking(what: str, subject: str, hours: str, **fields: dict[str, Any]) -> Line:
    """A line whose callers mostly want an appointment."""
    return Line(
        what=what,
        objective=(f"Answer callers of {what}. Find out who is calling and what they need; for {subject}, take the "
                   "request with the caller's preferred time so the team can confirm it. Answer questions about "
                   "opening hours and what the business offers from what the caller is told here, and otherwise "
                   "take a clear message."),
        outcome_schema={"summary": SUMMARY, "caller_name": CALLER_NAME, **fields,
                        "booking_requested": {"type": "boolean", "description": f"The caller asked for {subject}"},
                        "preferred_time": PREFERRED_TIME},
        hours=hours,
        sms={"name": "Booking request", "condition": {"field": "booking_requested", "op": "eq", "value": True},
             "body": ("Thanks for calling {{ number.e164 }}. We have your request ({{ outcome.preferred_time }}) "
                      "and will confirm the time shortly.")},
    )


def _callback(what: str, objective: str, hours: str, **fields: dict[str, Any]) -> Line:
    """A line whose callers mostly want someone to call them back."""
    return Line(
        what=what, objective=objective, hours=hours,
        outcome_schema={"summary": SUMMARY, "caller_name": CALLER_NAME, **fields,
                        "callback_requested": {"type": "boolean", "description": "The caller wants a call back"}},
        sms={"name": "Call back", "condition": {"field": "callback_requested", "op": "eq", "value": True},
             "body": "Thanks for calling {{ number.e164 }}. We got your message and will call you back soon."},
    )


def _enum(*values: str, description: str) -> dict[str, Any]:
    return {"type": "enum", "values": list(values), "description": description}


LINES: dict[str, Line] = {
    "veterinary": _booking("the veterinary practice", "a visit", "office",
                           pet_name={"type": "string", "optional": True, "description": "The pet's name"}),
    "dental": _booking("the dental practice", "an appointment", "office",
                       visit_reason=_enum("checkup", "cleaning", "toothache", "other", description="Why they want "
                                                                                                    "to come")),
    "medical_office": _booking("the practice", "an appointment", "office",
                               request=_enum("new_appointment", "reschedule", "cancel", "question",
                                             description="What the caller asked for")),
    "restaurant": _booking("the restaurant", "a table", "restaurant",
                           party_size={"type": "integer", "optional": True, "description": "How many guests"}),
    "salon_spa": _booking("the salon", "an appointment", "salon",
                          service={"type": "string", "optional": True, "description": "The treatment wanted"}),
    "auto_services": _booking("the garage", "a service slot", "trades",
                              vehicle={"type": "string", "optional": True, "description": "Make and model"}),
    "fitness": _booking("the studio", "a class or an intro session", "gym",
                        interest=_enum("membership", "classes", "personal_training", "other",
                                       description="What the caller is interested in")),
    "hospitality": _booking("the hotel", "a room", "always",
                            guests={"type": "integer", "optional": True, "description": "How many guests"}),
    "professional_office": _booking("the office", "a consultation", "office",
                                    topic={"type": "string", "optional": True, "description": "What it is about"}),
    "home_services": _callback(
        "the team", "Answer callers of the team. Find out what job they need done, where, and how soon, so a "
        "technician can call them back with a time and a quote. Take a clear message for anything else.", "trades",
        job={"type": "string", "description": "The work the caller needs"},
        urgent={"type": "boolean", "optional": True, "description": "It cannot wait until tomorrow"}),
    "property_management": _callback(
        "the property office", "Answer residents and applicants. For a repair, note the unit and the problem and "
        "whether it is urgent; for anything else, take a clear message for the office.", "office",
        request=_enum("maintenance", "leasing", "payment", "other", description="What the call is about"),
        unit={"type": "string", "optional": True, "description": "The unit or address"}),
    "retail_orders": _callback(
        "the shop", "Answer customers of the shop: opening hours, products and their orders. For an order, note the "
        "order number; what you cannot answer, take as a message so the team can call back.", "shop",
        order_number={"type": "string", "optional": True, "description": "The order number, if any"}),
    GENERAL: _callback(
        "the business", "Answer the call on behalf of the business: find out who is calling and what they need, help "
        "with it where you can, and otherwise take a clear message with a way to call them back.", "office"),
}


def config_for(category: str, description: str) -> dict[str, Any]:
    """The configuration of a business class (the general one for any other category)."""
    line = LINES.get(category, LINES[GENERAL])
    return {
        "greeting": f"Thanks for calling! You have reached the virtual assistant of {line.what}. How can I help?",
        "persona": PERSONA,
        "objective": line.objective,
        "outcome_schema": copy.deepcopy(line.outcome_schema),
        "timezone": zone_for(description),
        "hours_json": copy.deepcopy(HOURS[line.hours]),
        "overflow_action": "voicemail",
        "voicemail_mode": "overflow_only",
        "voicemail_schema": copy.deepcopy(VOICEMAIL_SCHEMA),
        "voicemail_persona": f"Friendly and short: {line.what} is closed right now; ask for a message and a number.",
        "sms_enabled": True,
        "sms_templates": [copy.deepcopy(line.sms)],
        "transfer_destinations": [],
    }
