"""The new-call and batch forms: what was typed (kept as typed, schema rows included), the request
body it makes for ``POST /v1/calls`` or ``/v1/calls/batch``, and the API's refusal placed next to
the fields it is about. Only form-shape faults are caught here (a ``name: value`` line without its
colon, a schema row without a name); every rule of a call is the API's, and so are its 422s."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, get_args

from domain.calls.dialing_rules import CONSENT_TYPES
from domain.calls.outcome_types import ENUM, FIELD_TYPES
from entrypoints.http.dashboard.api import Answer
from entrypoints.http.dashboard.session import Session
from entrypoints.http.schemas.calls import AnsweredBy

ANSWERED_BY = get_args(AnsweredBy)
VOICE_ENGINES = ("alpha_25", "alpha_31")
# The form's single-valued fields (``numbers`` is the batch's pasted list).
TEXT_FIELDS = ("to", "objective", "consent_type", "mode", "sim_at", "sim_persona", "sim_answered_by", "sim_facts",
               "template_id", "flow_id", "from_number", "voice_id", "voice_engine", "language", "consent_record_id",
               "metadata", "variables", "numbers")
MORE = ("template_id", "flow_id", "from_number", "voice_id", "voice_engine", "language", "consent_record_id",
        "metadata", "variables")  # inside "More options"
# Where the API places a problem (its ``loc`` without ``body``) → the form field shown beside it;
# the longest match wins, so ``simulation.at`` goes to its own input and ``simulation`` to the facts.
WHERE = {"to": "to", "objective": "objective", "consent_type": "consent_type", "mode": "mode",
         "outcome_schema": "outcome_schema", "simulation.at": "sim_at", "simulation.persona": "sim_persona",
         "simulation.answered_by": "sim_answered_by", "simulation.facts": "sim_facts", "simulation": "sim_facts",
         "template_id": "template_id", "flow_id": "flow_id", "from_number": "from_number", "voice_id": "voice_id",
         "voice_engine": "voice_engine", "language": "language", "consent_record_id": "consent_record_id",
         "metadata": "metadata", "variables": "variables", "items": "numbers",
         "header.Idempotency-Key": "idempotency_key"}
CHOICES = {"types": FIELD_TYPES, "enum": ENUM, "consent_types": CONSENT_TYPES, "answered_by": ANSWERED_BY,
           "voice_engines": VOICE_ENGINES}


@dataclass
class Filled:
    """A form as typed, and what is wrong with it (beside each field, or in words above the form)."""

    values: dict[str, str]
    rows: list[dict[str, Any]]
    problems: dict[str, str] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)
    key: str = field(default_factory=lambda: str(uuid.uuid4()))  # this rendering's Idempotency-Key

    @classmethod
    def blank(cls) -> Filled:
        values = dict.fromkeys(TEXT_FIELDS, "")
        values.update(mode="simulated", consent_type=CONSENT_TYPES[0])
        return cls(values=values, rows=[_row("", "boolean", False, "", "")])

    @property
    def wrong(self) -> bool:
        return bool(self.problems or self.others or any(row["problem"] for row in self.rows))

    @property
    def more_open(self) -> bool:
        return any(self.values.get(name) or self.problems.get(name) for name in MORE)

    def add(self, name: str, message: str) -> None:
        self.problems[name] = f"{self.problems[name]}; {message}" if name in self.problems else message


def _row(name: str, kind: str, optional: bool, description: str, values: str) -> dict[str, Any]:
    return {"name": name, "type": kind, "optional": optional, "description": description, "values": values,
            "problem": ""}


def read_form(session: Session) -> Filled:
    values = {name: session.field(name) for name in TEXT_FIELDS}
    values["numbers"] = str(session.form.get("numbers") or "")  # lines as pasted
    form = session.form
    names, kinds, descriptions, enums = (list(form.getall(n, [])) for n in
                                         ("field_name", "field_type", "field_description", "field_values"))
    optional = set(form.getall("field_optional", []))
    rows = []
    for index, name in enumerate(names):
        row = _row(str(name).strip(), _at(kinds, index) or "string", str(index) in optional,
                   _at(descriptions, index), _at(enums, index))
        if row["name"] or row["description"] or row["values"]:
            rows.append(row)
    filled = Filled(values=values, rows=rows)
    if key := session.field("idempotency_key"):
        filled.key = key  # the key this form was rendered with: sent twice, it makes one call
    return filled


def _at(items: list[Any], index: int) -> str:
    return str(items[index]).strip() if index < len(items) else ""


def _lines(filled: Filled, name: str, *, as_json: bool) -> dict[str, Any] | None:
    """``name: value`` lines as a map (a value read as JSON when it is JSON: ``true``, ``3``, ``["a"]``)."""
    found: dict[str, Any] = {}
    for number, line in enumerate(filled.values[name].splitlines(), start=1):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            filled.add(name, f"line {number}: write it as name: value")
            continue
        value = value.strip()
        if as_json:
            try:
                found[key.strip()] = json.loads(value)
                continue
            except ValueError:
                pass
        found[key.strip()] = value
    return found or None


def outcome_schema(filled: Filled) -> dict[str, Any] | None:
    schema: dict[str, Any] = {}
    for row in filled.rows:
        if not row["name"]:
            row["problem"] = "Give this field a name (lower case letters, digits and _)."
            continue
        if row["name"] in schema:
            row["problem"] = f"Another row is already named {row['name']}: each field needs its own name."
            continue
        definition: dict[str, Any] = {"type": row["type"]}
        if row["optional"]:
            definition["optional"] = True
        if row["description"]:
            definition["description"] = row["description"]
        if row["type"] == ENUM:  # values typed for another type are kept on the form but not sent
            definition["values"] = [v.strip() for v in row["values"].split(",") if v.strip()]
        schema[row["name"]] = definition
    return schema or None


def shared_body(filled: Filled) -> dict[str, Any]:
    """The fields a single call and a batch share, as the API takes them (empty ones left out)."""
    v = filled.values
    body: dict[str, Any] = {name: v[name] for name in ("objective", "consent_type", "template_id", "flow_id",
                                                       "from_number", "voice_id", "voice_engine", "language")
                            if v[name]}
    if (schema := outcome_schema(filled)) is not None:
        body["outcome_schema"] = schema
    body["mode"] = "simulated" if v["mode"] == "simulated" else "live"
    if body["mode"] == "simulated":
        simulation: dict[str, Any] = {}
        for name, key in (("sim_at", "at"), ("sim_persona", "persona"), ("sim_answered_by", "answered_by")):
            if v[name]:
                simulation[key] = v[name]
        if (facts := _lines(filled, "sim_facts", as_json=True)) is not None:
            simulation["facts"] = facts
        if simulation:
            body["simulation"] = simulation
    if (metadata := _lines(filled, "metadata", as_json=True)) is not None:
        body["metadata"] = metadata
    if (variables := _lines(filled, "variables", as_json=False)) is not None:
        body["variables"] = variables
    return body


def call_body(filled: Filled) -> dict[str, Any]:
    body = {"to": filled.values["to"], **shared_body(filled)}
    if filled.values["consent_record_id"]:
        body["consent_record_id"] = filled.values["consent_record_id"]
    return body


def place(filled: Filled, answer: Answer, item_rows: list[int] | None = None) -> None:
    """The API's 422 problems beside their fields (a schema row's under ``outcome_schema.<name>``; a
    batch item's under the pasted numbers, by the line it came from); any other refusal in words."""
    if answer.status != 422 or not answer.problems:
        filled.others.append(in_words(answer))
        return
    by_name = {row["name"]: row for row in filled.rows if row["name"]}
    for where, message in answer.problems:
        parts = where.split(".")
        if parts[0] == "outcome_schema" and len(parts) > 1 and (row := _row_at(by_name, where)) is not None:
            detail = where[len("outcome_schema." + row["name"]):].lstrip(".")
            text = f"{detail}: {message}" if detail and detail != "type" else message
            row["problem"] = f"{row['problem']}; {text}" if row["problem"] else text
            continue
        if parts[0] == "items" and item_rows is not None and len(parts) > 1 and parts[1].isdigit():
            index = int(parts[1])
            line = item_rows[index] if index < len(item_rows) else index + 1
            filled.add("numbers", f"line {line}: {message}")
            continue
        target = next((WHERE[api] for api in sorted(WHERE, key=len, reverse=True)
                       if where == api or where.startswith(api + ".")), None)
        if target is None or target == "idempotency_key":
            filled.others.append(f"{where}: {message}" if where else message)
        else:
            filled.add(target, message)


def _row_at(rows: dict[str, dict[str, Any]], where: str) -> dict[str, Any] | None:
    for name in sorted(rows, key=len, reverse=True):
        prefix = "outcome_schema." + name
        if where == prefix or where.startswith(prefix + "."):
            return rows[name]
    return None


def in_words(answer: Answer) -> str:
    code, message = answer.error.get("code", ""), answer.error.get("message", "")
    if answer.status == 429:
        wait = answer.headers.get("retry-after", "a few")
        return f"Too many requests right now: nothing was created. Try again in {wait} seconds."
    if answer.status == 409:
        return ("This form was already sent with different values, so nothing new was created. Check the calls "
                "list, then send the form again (it now carries a fresh key).")
    if code == "account_pending_review":
        return ("Your account is pending review: calls can be placed once an operator approves it. Nothing was "
                f"created. ({message})")
    if answer.status == 403:
        return f"Not allowed: {message}" if message else "Not allowed."
    return message or f"The request was refused (HTTP {answer.status})."
