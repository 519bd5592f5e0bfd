"""A number's post-call SMS templates (SPEC.md Number ``sms_templates``, Numbers and SMS preview):
their rules, the check against the number's ``outcome_schema``, when one fires and how it renders.

A body is text with placeholders in double braces, spaces inside allowed: ``{{ outcome.<field> }}``
(a field of the number's outcome_schema), ``{{ call.from }}`` (the caller), ``{{ call.to }}`` (the
number called) and ``{{ number.e164 }}`` (this number). Nothing else may stand in double braces and
``{{`` or ``}}`` is refused outside a placeholder, so a rendered body never shows placeholder text;
values are put in once, never read again as placeholders. Pure: stdlib and the outcome schema."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from domain.calls.outcome_schema import FieldSpec, OutcomeSchema
from domain.calls.outcome_types import ARRAY, BOOLEAN, DATE, DATETIME, ENUM, INTEGER, NUMBER, Fault, field_type
from domain.calls.outcome_types import FIELD_NAME_RULE, is_field_name
from domain.errors import InputProblem
from domain.text import unsafe_text

MAX_TEMPLATES = 10
MAX_NAME = 80
MAX_BODY = 1600  # a long SMS: ten segments of 160 characters
TEMPLATE_KEYS = ("id", "name", "body", "condition")
CONDITION_KEYS = ("field", "op", "value")
OPS = ("eq", "ne", "present", "absent", "gt", "lt")
VALUE_OPS, ORDER_OPS = frozenset({"eq", "ne", "gt", "lt"}), frozenset({"gt", "lt"})
ID_SHAPE = re.compile(r"smt_[0-9a-f]{32}")
CALL_PLACEHOLDERS = ("call.from", "call.to", "number.e164")
ALLOWED = "allowed: {{ outcome.<field> }}, {{ call.from }}, {{ call.to }}, {{ number.e164 }}"
EXAMPLE_CALLER = "+15555550123"  # the caller of a preview (555-01xx numbers are reserved for fiction)
EXAMPLES: Mapping[str, Any] = {BOOLEAN: True, INTEGER: 1, NUMBER: 1.5, DATE: "2026-03-08",
                               DATETIME: "2026-03-08T14:30:00Z"}

_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_BRACES = re.compile(r"\{\{|\}\}")


def new_template_id() -> str:
    return "smt_" + uuid.uuid4().hex


def check_templates(value: Any, own_e164: str, problems: list[InputProblem], *,
                    new_id: Callable[[], str] = new_template_id) -> list[dict[str, Any]] | None:
    """The normalized templates (``{id, name, body, condition}``: a new id where none or null was
    given, the name stripped, ``condition`` None when absent), or None with every problem added to
    ``problems``. ``functools.partial(check_templates, new_id=...)`` fixes how new ids are made."""
    if not isinstance(value, list):
        problems.append(([], "must be a list of templates {name, body, condition?}", "list_type", value))
        return None
    before = len(problems)
    if len(value) > MAX_TEMPLATES:
        problems.append(([], f"a number has at most {MAX_TEMPLATES} SMS templates", "too_long", len(value)))
    ids, names, checked = set[str](), set[str](), list[dict[str, Any]]()
    for index, item in enumerate(value):
        if (template := _template(item, [index], problems, new_id)) is not None:
            checked.append(template)
        template_id, name = (item.get("id"), item.get("name")) if isinstance(item, Mapping) else (None, None)
        template_id = template_id if isinstance(template_id, str) and ID_SHAPE.fullmatch(template_id) else ""
        if template_id and template_id in ids:  # only well-formed ids: a malformed one has its own problem
            problems.append(([index, "id"], "another template has the same id", "duplicate_id", template_id))
        folded = name.strip().casefold() if isinstance(name, str) else ""
        if folded and folded in names:
            problems.append(([index, "name"], f"another template is named {name.strip()!r}", "duplicate_name", name))
        ids.add(template_id)
        names.add(folded)
    return None if len(problems) > before else checked


def check_against_schema(templates: list[dict[str, Any]], outcome_schema: OutcomeSchema | Mapping[str, Any],
                         problems: list[InputProblem]) -> list[dict[str, Any]] | None:
    """Checked templates against the number's outcome schema: each ``{{ outcome.<field> }}`` and condition
    field is one of its fields, gt/lt on integer or number fields only, an eq/ne value fits its field. The
    templates with eq/ne values normalized to the field's type (2.0 is 2), or None with every problem."""
    fields = {spec.name: spec for spec in OutcomeSchema.of(outcome_schema).fields}
    known = f"its fields: {', '.join(fields)}"
    before = len(problems)
    checked: list[dict[str, Any]] = []
    for index, template in enumerate(templates):
        name = template["name"]
        keys = (_outcome_key(match.group(1).strip()) for match in _PLACEHOLDER.finditer(template["body"]))
        for key in dict.fromkeys(key for key in keys if key is not None and key not in fields):
            problems.append(([index, "body"], f"template {name!r}: {{{{ outcome.{key} }}}} is not a field of the "
                             f"number's outcome_schema ({known})", "unknown_outcome_field", f"{{{{ outcome.{key} }}}}"))
        condition = template.get("condition")
        if condition is not None and condition["field"] not in fields:
            problems.append(([index, "condition", "field"], f"template {name!r}: condition field "
                             f"{condition['field']!r} is not a field of the number's outcome_schema ({known})",
                             "unknown_outcome_field", condition["field"]))
        elif condition is not None:
            condition = _fit(condition, fields[condition["field"]], name, [index, "condition"], problems)
        checked.append({**template, "condition": condition})
    return None if len(problems) > before else checked


def holds(condition: Mapping[str, Any] | None, outcome: Mapping[str, Any]) -> bool:
    """Whether ``condition`` holds on ``outcome`` (no condition always does). present: there and not null;
    gt/lt: both sides numbers, else False; eq/ne: JSON equality (true is not 1), ne holding when missing."""
    if condition is None:
        return True
    field, op = condition["field"], condition["op"]
    found = outcome.get(field)
    if op in ("present", "absent"):
        return (found is not None) == (op == "present")
    if op in ORDER_OPS:
        wanted = condition["value"]
        return _is_number(found) and _is_number(wanted) and bool(found > wanted if op == "gt" else found < wanted)
    if op in ("eq", "ne"):
        return (field in outcome and _equal(found, condition["value"])) == (op == "eq")
    raise ValueError(f"unknown condition op {op!r}")


def render(body: str, *, outcome: Mapping[str, Any], call_from: str | None, call_to: str | None,
           number_e164: str) -> str:
    """``body`` with every placeholder replaced: missing or null is empty text, true/false "yes"/"no", a
    list joined by ", ", a whole number without ".0". ``ValueError`` for a body ``check_templates`` refuses."""
    if faults := _body_faults(body):
        raise ValueError(faults[0][0])
    values = {**{f"outcome.{key}": value for key, value in outcome.items()},
              "call.from": call_from, "call.to": call_to, "number.e164": number_e164}
    return _PLACEHOLDER.sub(lambda match: _text(values.get(match.group(1).strip())), body)


def example_value(spec: FieldSpec) -> Any:
    """A deterministic value of the field's type: an enum's first value, 1, 1.5, true, a fixed date
    or date-time (``EXAMPLES``), and for text the field's name in words ("caller name")."""
    words = spec.name.replace("_", " ")
    if spec.type == ENUM and spec.values:
        return spec.values[0]
    return [f"{words} 1", f"{words} 2"] if spec.type == ARRAY else EXAMPLES.get(spec.type, words)


def example_outcome(outcome_schema: OutcomeSchema | Mapping[str, Any]) -> dict[str, Any]:
    """The synthetic outcome of a preview: every field, optional ones too, at its example value."""
    return {spec.name: example_value(spec) for spec in OutcomeSchema.of(outcome_schema).fields}


def preview(template: Mapping[str, Any], outcome_schema: OutcomeSchema | Mapping[str, Any], *,
            number_e164: str) -> tuple[bool, str]:
    """(would_fire, rendered_body) of ``template`` on ``example_outcome``, for an inbound call from
    ``EXAMPLE_CALLER`` to the number (``call.to`` is ``number_e164``)."""
    outcome = example_outcome(outcome_schema)
    return holds(template.get("condition"), outcome), render(
        template["body"], outcome=outcome, call_from=EXAMPLE_CALLER, call_to=number_e164, number_e164=number_e164)


def messages_for(templates: list[Mapping[str, Any]], outcome: Mapping[str, Any], *, call_from: str | None,
                 call_to: str | None, number_e164: str) -> list[tuple[str, str]]:
    """After a terminal call: (template id, rendered body) of each template whose condition holds on
    ``outcome``, in the templates' order. Sending each once is the caller's part."""
    return [(t["id"], render(t["body"], outcome=outcome, call_from=call_from, call_to=call_to,
                             number_e164=number_e164)) for t in templates if holds(t.get("condition"), outcome)]


def _template(item: Any, loc: list[str | int], problems: list[InputProblem],
              new_id: Callable[[], str]) -> dict[str, Any] | None:
    if not isinstance(item, Mapping):
        problems.append((loc, "must be an object {name, body, condition?}", "dict_type", item))
        return None
    before = len(problems)
    _extra(item, TEMPLATE_KEYS, "an SMS template", loc, problems)
    template_id = item.get("id")
    if template_id is not None and not (isinstance(template_id, str) and ID_SHAPE.fullmatch(template_id)):
        problems.append(([*loc, "id"], "must be an id like smt_<32 hex digits> (leave it out for a new template)",
                         "template_id", template_id))
    name = _text_field(item, "name", MAX_NAME, [*loc, "name"], problems)
    body = _text_field(item, "body", MAX_BODY, [*loc, "body"], problems)
    if isinstance(body, str):
        problems.extend(([*loc, "body"], message, kind, bad) for message, kind, bad in _body_faults(body))
    condition = _condition(item.get("condition"), [*loc, "condition"], problems)
    if len(problems) > before:
        return None
    return {"id": template_id or new_id(), "name": name.strip(), "body": body, "condition": condition}


def _extra(raw: Mapping[Any, Any], allowed: tuple[str, ...], what: str, loc: list[str | int],
           problems: list[InputProblem]) -> None:
    for key in raw:
        if key not in allowed:
            where = key if isinstance(key, str | int) and not isinstance(key, bool) else repr(key)
            problems.append(([*loc, where], f"is not a field of {what}; allowed: {', '.join(allowed)}",
                             "extra_forbidden", raw[key]))


def _text_field(item: Mapping[str, Any], key: str, limit: int, loc: list[str | int],
                problems: list[InputProblem]) -> Any:
    value = item.get(key)
    if key not in item:
        problems.append((loc, f"{key} is required", "missing", None))
    elif not isinstance(value, str):
        problems.append((loc, "must be a string", "string_type", value))
    elif not value.strip():
        problems.append((loc, "must not be blank", "string_too_short", value))
    elif len(value) > limit:
        problems.append((loc, f"must be at most {limit} characters", "string_too_long", value))
    elif (unsafe := unsafe_text(value)) is not None:
        problems.append((loc, unsafe, "value_error", value))
    return value


def _body_faults(body: str) -> list[tuple[str, str, str]]:
    faults: list[tuple[str, str, str]] = []
    start, stray = 0, False
    for match in [*_PLACEHOLDER.finditer(body), None]:
        for brace in _BRACES.finditer(body, start, match.start() if match else len(body)):
            fragment = body[brace.start():brace.start() + 30]
            what = "opens no placeholder (unclosed or nested)" if brace.group() == "{{" else "closes no placeholder"
            faults.append((f"{brace.group()} {what} at {fragment!r}; {ALLOWED}", "malformed_placeholder", fragment))
            stray = True
        if match is None:
            break
        start, text, name = match.end(), match.group(), match.group(1).strip()
        if not _DOTTED.fullmatch(name):
            faults.append((f"{text} is not a placeholder name; {ALLOWED}", "malformed_placeholder", text))
        elif name not in CALL_PLACEHOLDERS and _outcome_key(name) is None:
            faults.append((f"{text} is not a known placeholder; {ALLOWED}", "unknown_placeholder", text))
    if not stray and _BRACES.search(_PLACEHOLDER.sub("", body)):
        faults.append(("a single brace on each side of a placeholder reads as {{ or }} when its value is empty",
                       "malformed_placeholder", body))
    return faults


def _outcome_key(name: str) -> str | None:
    namespace, _, key = name.partition(".")
    return key if namespace == "outcome" and is_field_name(key) else None


def _condition(raw: Any, loc: list[str | int], problems: list[InputProblem]) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append((loc, "must be an object {field, op, value?}", "dict_type", raw))
        return None
    before = len(problems)
    _extra(raw, CONDITION_KEYS, "a condition", loc, problems)
    field, op, value = raw.get("field"), raw.get("op"), raw.get("value")
    if "field" not in raw:
        problems.append(([*loc, "field"], "field is required", "missing", None))
    elif not isinstance(field, str):
        problems.append(([*loc, "field"], "must be the name of an outcome field", "string_type", field))
    elif not is_field_name(field):
        problems.append(([*loc, "field"], FIELD_NAME_RULE, "field_name_invalid", field))
    if "op" not in raw:
        problems.append(([*loc, "op"], "op is required", "missing", None))
    elif not isinstance(op, str) or op not in OPS:
        problems.append(([*loc, "op"], f"must be one of {', '.join(OPS)}", "enum", op))
    elif op in VALUE_OPS and "value" not in raw:
        problems.append(([*loc, "value"], f"op {op} needs a value", "missing", None))
    elif op in VALUE_OPS and not (isinstance(value, str | bool) or _is_number(value)):
        problems.append(([*loc, "value"], "must be a string, number or boolean (present/absent test for null)",
                         "condition_value", value))
    elif op in ORDER_OPS and not _is_number(value):
        problems.append(([*loc, "value"], f"op {op} compares numbers: the value must be a number", "float_type", value))
    elif op not in VALUE_OPS and "value" in raw:
        takes = ", ".join(name for name in OPS if name in VALUE_OPS)
        problems.append(([*loc, "value"], f"op {op} takes no value; the ops that take one are {takes}",
                         "value_not_allowed", value))
    if len(problems) > before:
        return None
    return {"field": field, "op": op, **({"value": value} if op in VALUE_OPS else {})}


def _fit(condition: dict[str, Any], spec: FieldSpec, name: str, loc: list[str | int],
         problems: list[InputProblem]) -> dict[str, Any]:
    op = condition["op"]
    if op in ORDER_OPS and spec.type not in (INTEGER, NUMBER):
        problems.append(([*loc, "op"], f"template {name!r}: {op} compares numbers, and {spec.name!r} is {spec.type}",
                         "condition_op", op))
    elif op in ("eq", "ne"):
        fitted = field_type(spec.type).check(condition["value"], spec.values or ())
        if not isinstance(fitted, Fault):
            return {**condition, "value": fitted}
        _, message, kind = fitted.problems[0]
        problems.append(([*loc, "value"], f"template {name!r}: the value does not fit {spec.name!r} ({spec.type}): "
                         f"{message}", kind, condition["value"]))
    return condition


def _text(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "" if value is None else "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, list | tuple):
        return ", ".join(_text(item) for item in value if item is not None)
    return str(value)


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and math.isfinite(value))


def _equal(found: Any, wanted: Any) -> bool:
    if isinstance(found, bool) or isinstance(wanted, bool):
        return isinstance(found, bool) and isinstance(wanted, bool) and found is wanted
    return bool(found == wanted)
