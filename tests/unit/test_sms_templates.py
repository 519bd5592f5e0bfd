"""A number's post-call SMS templates (issue 14, SPEC.md Number ``sms_templates`` and the SMS
preview): every rule of a template and its condition, the check against the number's outcome
schema, when a template fires, how a body renders, and the synthetic outcome of a preview."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from domain.calls.outcome_schema import compile_schema
from domain.calls.outcome_types import FIELD_TYPES
from domain.errors import InputProblem
from domain.numbers import configuration
from domain.numbers import sms_templates as sms

OWN = "+14155550100"
CALLER = "+14155550123"
EVERY_TYPE = {f"a_{name}": {"type": name, **({"values": ["red", "green"]} if name == "enum" else {})}
              for name in FIELD_TYPES}
SCHEMA = {"caller_name": {"type": "string", "optional": True}, "booked": {"type": "boolean"},
          "party_size": {"type": "integer"}, "total": {"type": "number", "optional": True},
          "day": {"type": "date"}, "at": {"type": "datetime", "optional": True},
          "mood": {"type": "enum", "values": ["happy", "upset"]}, "items": {"type": "array", "optional": True}}


def counter() -> Any:
    numbers = itertools.count(1)
    return lambda: f"smt_{next(numbers):032x}"


def check(value: Any) -> tuple[list[dict[str, Any]] | None, list[InputProblem]]:
    problems: list[InputProblem] = []
    return sms.check_templates(value, OWN, problems, new_id=counter()), problems


def faults(value: Any) -> list[tuple[list[str | int], str]]:
    result, problems = check(value)
    assert (result is None) == bool(problems)
    return [(loc, kind) for loc, _, kind, _ in problems]


def against(templates: list[dict[str, Any]], schema: Any = SCHEMA) -> tuple[Any, list[InputProblem]]:
    checked, problems = check(templates)
    assert checked is not None, problems
    found: list[InputProblem] = []
    return sms.check_against_schema(checked, schema, found), found


def one(body: str, condition: Any = None, **more: Any) -> list[dict[str, Any]]:
    return [{"name": "Thanks", "body": body, **({"condition": condition} if condition is not None else {}), **more}]


# --- check_templates: the shape of a template -----------------------------------------------------


def test_a_valid_list_is_normalized_with_new_ids_a_stripped_name_and_an_explicit_condition():
    given_id = "smt_" + "a" * 32
    checked, problems = check([
        {"name": "  Thanks ", "body": "Thanks {{ outcome.caller_name }}!"},
        {"id": given_id, "name": "Booked", "body": "See you {{outcome.day}}",
         "condition": {"field": "booked", "op": "eq", "value": True}},
        {"id": None, "name": "Upset", "body": "Sorry", "condition": {"field": "mood", "op": "present"}},
    ])
    assert problems == []
    assert checked == [
        {"id": f"smt_{1:032x}", "name": "Thanks", "body": "Thanks {{ outcome.caller_name }}!", "condition": None},
        {"id": given_id, "name": "Booked", "body": "See you {{outcome.day}}",
         "condition": {"field": "booked", "op": "eq", "value": True}},
        {"id": f"smt_{2:032x}", "name": "Upset", "body": "Sorry", "condition": {"field": "mood", "op": "present"}},
    ]


def test_the_default_new_id_is_smt_and_32_lowercase_hex_and_fresh_each_time():
    first, second = sms.new_template_id(), sms.new_template_id()
    assert sms.ID_SHAPE.fullmatch(first) and sms.ID_SHAPE.fullmatch(second) and first != second
    problems: list[InputProblem] = []
    checked = sms.check_templates(one("Hi"), OWN, problems)
    assert checked is not None and sms.ID_SHAPE.fullmatch(checked[0]["id"])


def test_the_checker_fits_the_configuration_checks_through_functools_partial():
    checker = functools.partial(sms.check_templates, new_id=lambda: "smt_" + "0" * 32)
    problems: list[InputProblem] = []
    assert checker(one("Hi"), OWN, problems)[0]["id"] == "smt_" + "0" * 32 and problems == []


def test_no_templates_is_a_valid_list_and_anything_but_a_list_is_refused():
    assert check([]) == ([], [])
    assert faults({"name": "x"}) == [([], "list_type")]
    assert faults(None) == [([], "list_type")]


def test_at_most_ten_templates():
    ten = [{"name": f"T{i}", "body": "Hi"} for i in range(10)]
    assert len(check(ten)[0]) == 10
    assert faults([*ten, {"name": "T10", "body": "Hi"}]) == [([], "too_long")]


def test_each_template_is_an_object_with_only_its_own_keys():
    assert faults(["Hi", {"name": "A", "body": "Hi", "to": "+1415", "when": "later"}]) == [
        ([0], "dict_type"), ([1, "to"], "extra_forbidden"), ([1, "when"], "extra_forbidden")]


@pytest.mark.parametrize("template_id", ["smt_" + "A" * 32, "smt_" + "a" * 31, "tpl_" + "a" * 32, 7, ""])
def test_a_given_id_must_be_smt_and_32_lowercase_hex(template_id):
    assert faults([{"id": template_id, "name": "A", "body": "Hi"}]) == [([0, "id"], "template_id")]


def test_ids_and_names_are_unique_names_ignoring_case_and_surrounding_spaces():
    same = "smt_" + "b" * 32
    assert faults([{"id": same, "name": "Thanks", "body": "Hi"}, {"id": same, "name": " THANKS", "body": "Hi"},
                   {"name": "thanks", "body": "Hi"}]) == [
        ([1, "id"], "duplicate_id"), ([1, "name"], "duplicate_name"), ([2, "name"], "duplicate_name")]


@pytest.mark.parametrize(("field", "value", "kind"), [
    ("name", "", "string_too_short"), ("name", "   ", "string_too_short"), ("name", "x" * 81, "string_too_long"),
    ("name", 5, "string_type"), ("body", "", "string_too_short"), ("body", " \n ", "string_too_short"),
    ("body", "x" * 1601, "string_too_long"), ("body", ["Hi"], "string_type"),
])
def test_a_name_is_1_to_80_characters_and_a_body_1_to_1600_neither_blank(field, value, kind):
    template = {"name": "A", "body": "Hi", field: value}
    assert faults([template]) == [([0, field], kind)]


def test_the_limits_themselves_are_allowed_and_name_and_body_are_required():
    assert check([{"name": "n" * 80, "body": "b" * 1600}])[1] == []
    assert faults([{}]) == [([0, "name"], "missing"), ([0, "body"], "missing")]


# --- placeholders -----------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    "{{call.from}}{{call.to}}{{number.e164}}{{outcome.caller_name}}",
    "Hi {{ call.from }}, {{\tcall.to\t}} {{  number.e164  }} {{ outcome.x_1 }}",
    "Use {braces} freely, even around { {{ call.from }} } and }{ alone",
    "No placeholders at all.",
])
def test_the_allowed_placeholders_with_any_spaces_inside_the_braces(body):
    assert check(one(body))[1] == []


@pytest.mark.parametrize("placeholder", [
    "{{ call.duration }}", "{{ number.id }}", "{{ caller.from }}", "{{ outcome }}", "{{ outcome.Name }}",
    "{{ outcome.a.b }}", "{{ OUTCOME.summary }}", "{{ call.from.x }}", "{{ call }}",
])
def test_an_unknown_namespace_or_key_is_named_at_the_body(placeholder):
    _, problems = check(one(f"Hi {placeholder}!"))
    assert [(loc, kind, bad) for loc, _, kind, bad in problems] == [([0, "body"], "unknown_placeholder", placeholder)]
    assert placeholder in problems[0][1] and "{{ call.from }}" in problems[0][1]  # it also says what is allowed


@pytest.mark.parametrize("body", [
    "Hi {{ }}", "Hi {{call from}}", "Hi {{ call.from", "Hi call.from }}", "{{ {{ call.from }} }}",
    "Hi {{ call.from }", "{{{{ call.from }}", "{{-x}}", "{{{ outcome.caller_name }}{",
    "}{{ outcome.caller_name }}}",
])
def test_a_malformed_placeholder_is_a_problem_at_the_body(body):
    found = faults(one(body))
    assert found and set(map(tuple, (loc for loc, _ in found))) == {(0, "body")}
    assert {kind for _, kind in found} == {"malformed_placeholder"}


def test_each_faulty_placeholder_is_its_own_problem():
    _, problems = check(one("{{ call.duration }} and {{ x y }} and {{ call.from }} and {{ open"))
    assert [(kind, bad) for _, _, kind, bad in problems] == [
        ("unknown_placeholder", "{{ call.duration }}"), ("malformed_placeholder", "{{ x y }}"),
        ("malformed_placeholder", "{{ open")]


# --- conditions -------------------------------------------------------------------------------------


@pytest.mark.parametrize("condition", [
    {"field": "booked", "op": "eq", "value": True}, {"field": "mood", "op": "ne", "value": "upset"},
    {"field": "total", "op": "gt", "value": 10}, {"field": "total", "op": "lt", "value": 2.5},
    {"field": "caller_name", "op": "present"}, {"field": "caller_name", "op": "absent"},
])
def test_every_op_with_its_value_rule(condition):
    checked, problems = check(one("Hi", condition))
    assert problems == [] and checked[0]["condition"] == condition


@pytest.mark.parametrize(("condition", "expected"), [
    ({"field": "booked", "op": "eq"}, [(["value"], "missing")]),
    ({"field": "caller_name", "op": "present", "value": "x"}, [(["value"], "value_not_allowed")]),
    ({"field": "caller_name", "op": "absent", "value": None}, [(["value"], "value_not_allowed")]),
    ({"field": "total", "op": "gt", "value": "10"}, [(["value"], "float_type")]),
    ({"field": "total", "op": "lt", "value": True}, [(["value"], "float_type")]),
    ({"field": "booked", "op": "eq", "value": None}, [(["value"], "condition_value")]),
    ({"field": "items", "op": "eq", "value": ["a"]}, [(["value"], "condition_value")]),
    ({"field": "items", "op": "ne", "value": {"a": 1}}, [(["value"], "condition_value")]),
    ({"field": "total", "op": "gt", "value": float("nan")}, [(["value"], "condition_value")]),
    ({"field": "booked", "op": "is", "value": True}, [(["op"], "enum")]),
    ({"field": "booked", "op": ["eq"], "value": True}, [(["op"], "enum")]),
    ({"field": "Booked", "op": "present"}, [(["field"], "field_name_invalid")]),
    ({"field": 3, "op": "present"}, [(["field"], "string_type")]),
    ({}, [(["field"], "missing"), (["op"], "missing")]),
    ({"field": "booked", "op": "present", "when": "now"}, [(["when"], "extra_forbidden")]),
])
def test_a_broken_condition_names_each_fault(condition, expected):
    assert faults(one("Hi", condition)) == [([0, "condition", *loc], kind) for loc, kind in expected]


def test_a_condition_is_an_object_and_null_means_none():
    assert faults(one("Hi", "booked")) == [([0, "condition"], "dict_type")]
    assert check([{"name": "A", "body": "Hi", "condition": None}])[0][0]["condition"] is None


def test_every_problem_is_reported_at_once():
    found = faults([
        {"name": "Thanks", "body": "Hi {{ call.duration }}"},
        {"name": "Other", "body": "Hi", "condition": {"field": "booked", "op": "is"}},
        {"name": "x" * 81, "body": "Hi"},
    ])
    assert found == [([0, "body"], "unknown_placeholder"), ([1, "condition", "op"], "enum"),
                     ([2, "name"], "string_too_long")]


# --- check_against_schema: the number's outcome schema ----------------------------------------------


def test_templates_that_fit_the_schema_pass_with_eq_values_normalized_to_the_field_type():
    checked, problems = against([
        {"name": "A", "body": "{{ outcome.caller_name }} for {{ outcome.party_size }}",
         "condition": {"field": "party_size", "op": "eq", "value": 4.0}},
        {"name": "B", "body": "At {{ outcome.at }}", "condition": {"field": "at", "op": "ne",
                                                                   "value": "2026-03-08T15:30:00+01:00"}},
        {"name": "C", "body": "Hi", "condition": {"field": "total", "op": "gt", "value": 1}},
    ])
    assert problems == []
    assert [t["condition"]["value"] for t in checked] == [4, "2026-03-08T14:30:00Z", 1]
    assert isinstance(checked[0]["condition"]["value"], int)


def test_an_unknown_outcome_field_names_the_template_and_the_placeholder():
    checked, problems = against(one("Hi {{ outcome.nmae }} {{outcome.nmae}} {{ outcome.caller_name }}",
                                    {"field": "bookd", "op": "present"}))
    assert checked is None
    assert [(loc, kind, bad) for loc, _, kind, bad in problems] == [
        ([0, "body"], "unknown_outcome_field", "{{ outcome.nmae }}"),
        ([0, "condition", "field"], "unknown_outcome_field", "bookd")]
    assert "'Thanks'" in problems[0][1] and "{{ outcome.nmae }}" in problems[0][1] and "caller_name" in problems[0][1]
    assert "'Thanks'" in problems[1][1] and "'bookd'" in problems[1][1]


@pytest.mark.parametrize(("condition", "loc", "kind"), [
    ({"field": "caller_name", "op": "gt", "value": 3}, "op", "condition_op"),
    ({"field": "day", "op": "lt", "value": 3}, "op", "condition_op"),
    ({"field": "booked", "op": "eq", "value": "yes"}, "value", "bool_type"),
    ({"field": "party_size", "op": "eq", "value": 2.5}, "value", "int_type"),
    ({"field": "total", "op": "eq", "value": True}, "value", "float_type"),
    ({"field": "mood", "op": "eq", "value": "angry"}, "value", "enum"),
    ({"field": "day", "op": "ne", "value": "tomorrow"}, "value", "date_parsing"),
    ({"field": "items", "op": "eq", "value": "milk"}, "value", "list_type"),
])
def test_a_condition_must_fit_its_fields_type(condition, loc, kind):
    _, problems = against(one("Hi", condition))
    assert [(p[0], p[2]) for p in problems] == [([0, "condition", loc], kind)]
    assert "'Thanks'" in problems[0][1]


def test_the_schema_may_be_a_compiled_value_and_every_template_is_checked():
    _, problems = against([{"name": "A", "body": "{{ outcome.x }}"}, {"name": "B", "body": "{{ outcome.y }}"}],
                          compile_schema(SCHEMA))
    assert [p[0] for p in problems] == [[0, "body"], [1, "body"]]


def test_the_default_outcome_schema_of_a_number_reads_summary_caller_name_and_callback():
    body = "{{ outcome.summary }} {{ outcome.caller_name }} {{ outcome.callback_requested }}"
    checked, problems = against(one(body, {"field": "callback_requested", "op": "eq", "value": True}),
                                configuration.DEFAULTS["outcome_schema"])
    assert problems == [] and checked is not None


# --- holds: the truth table of a condition ----------------------------------------------------------

OUTCOME = {"booked": True, "party_size": 4, "total": 12.5, "caller_name": None, "mood": "happy", "items": ["a"]}


@pytest.mark.parametrize(("field", "op", "value", "expected"), [
    ("booked", "eq", True, True), ("booked", "eq", False, False), ("booked", "ne", True, False),
    ("party_size", "eq", 4, True), ("party_size", "eq", 4.0, True), ("party_size", "eq", "4", False),
    ("booked", "eq", 1, False), ("party_size", "eq", True, False),
    ("mood", "eq", "happy", True), ("mood", "ne", "happy", False), ("mood", "ne", "upset", True),
    ("missing", "eq", "x", False), ("missing", "ne", "x", True),
    ("caller_name", "eq", "Ann", False), ("caller_name", "ne", "Ann", True),
    ("party_size", "gt", 3, True), ("party_size", "gt", 4, False), ("party_size", "lt", 5, True),
    ("total", "gt", 12, True), ("total", "lt", 12.5, False),
    ("missing", "gt", 0, False), ("missing", "lt", 0, False), ("caller_name", "gt", 0, False),
    ("mood", "gt", 0, False), ("booked", "gt", 0, False),
    ("booked", "present", None, True), ("caller_name", "present", None, False), ("missing", "present", None, False),
    ("booked", "absent", None, False), ("caller_name", "absent", None, True), ("missing", "absent", None, True),
    ("items", "present", None, True),
])
def test_the_truth_table_of_every_op(field, op, value, expected):
    condition = {"field": field, "op": op, **({} if op in ("present", "absent") else {"value": value})}
    assert sms.holds(condition, OUTCOME) is expected


def test_no_condition_always_holds_and_an_unknown_op_is_a_bug():
    assert sms.holds(None, {}) is True
    with pytest.raises(ValueError):
        sms.holds({"field": "a", "op": "between", "value": 1}, {})


# --- render, examples, preview and the post-call messages -------------------------------------------


def render(body: str, outcome: dict[str, Any], call_from: str | None = CALLER) -> str:
    return sms.render(body, outcome=outcome, call_from=call_from, call_to=OWN, number_e164=OWN)


@pytest.mark.parametrize(("value", "text"), [
    (None, ""), (True, "yes"), (False, "no"), (3, "3"), (3.0, "3"), (-2.0, "-2"), (2.5, "2.5"), ("Ann", "Ann"),
    (["milk", "eggs"], "milk, eggs"), ([], ""), (1e20, "1e+20"), ("", ""),
])
def test_each_kind_of_value_renders_as_text(value, text):
    assert render("[{{ outcome.v }}]", {"v": value}) == f"[{text}]"


def test_render_fills_the_call_and_number_placeholders_and_leaves_missing_fields_empty():
    body = "From {{ call.from }} to {{call.to}} on {{ number.e164 }}: {{ outcome.gone }}."
    assert render(body, {}) == f"From {CALLER} to {OWN} on {OWN}: ."
    assert render("Caller: {{ call.from }}", {}, call_from=None) == "Caller: "


def test_values_are_put_in_once_never_read_as_placeholders():
    assert render("{{ outcome.a }}", {"a": "{{ call.from }}"}) == "{{ call.from }}"


@pytest.mark.parametrize("body", ["{{ call.duration }}", "{{ open", "x }}"])
def test_render_refuses_a_body_the_check_refuses(body):
    with pytest.raises(ValueError):
        render(body, {})


def test_the_example_outcome_has_one_fixed_value_per_type_and_satisfies_the_schema():
    example = sms.example_outcome(EVERY_TYPE)
    assert example == {"a_boolean": True, "a_string": "a string", "a_datetime": "2026-03-08T14:30:00Z",
                       "a_date": "2026-03-08", "a_integer": 1, "a_number": 1.5, "a_enum": "red",
                       "a_array": ["a array 1", "a array 2"]}
    assert compile_schema(EVERY_TYPE).validate(example) == example
    assert sms.example_outcome(compile_schema(EVERY_TYPE)) == example


def test_a_preview_renders_on_the_example_outcome_from_the_example_caller():
    template = against(one("Hi {{ outcome.caller_name }}, {{ outcome.party_size }} at {{ outcome.at }} "
                           "({{ outcome.booked }}, {{ outcome.mood }}) from {{ call.from }} to {{ call.to }}",
                           {"field": "mood", "op": "eq", "value": "happy"}))[0][0]
    assert sms.preview(template, SCHEMA, number_e164=OWN) == (
        True, f"Hi caller name, 1 at 2026-03-08T14:30:00Z (yes, happy) from {sms.EXAMPLE_CALLER} to {OWN}")
    assert sms.preview({**template, "condition": {"field": "total", "op": "gt", "value": 2}}, SCHEMA,
                       number_e164=OWN)[0] is False


def test_after_a_call_each_template_whose_condition_holds_is_rendered_once_in_order():
    templates, _ = check([{"name": "A", "body": "Booked for {{ outcome.party_size }}",
                           "condition": {"field": "booked", "op": "eq", "value": True}},
                          {"name": "B", "body": "Sorry", "condition": {"field": "booked", "op": "eq", "value": False}},
                          {"name": "C", "body": "Thanks {{ call.from }}"}])
    sent = sms.messages_for(templates, {"booked": True, "party_size": 2}, call_from=CALLER, call_to=OWN,
                            number_e164=OWN)
    assert sent == [(templates[0]["id"], "Booked for 2"), (templates[2]["id"], f"Thanks {CALLER}")]


# --- properties -------------------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
PLAIN = st.text(st.characters(blacklist_characters="{}\x00", blacklist_categories=("Cs",)), max_size=12)
SPACE = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def schemas(draw: Any) -> dict[str, Any]:
    names = draw(st.lists(NAMES, min_size=1, max_size=6, unique=True))
    schema = {}
    for name in names:
        kind = draw(st.sampled_from(FIELD_TYPES))
        values = draw(st.lists(st.text("abcxyz ", min_size=1, max_size=5).filter(str.strip), min_size=1,
                               max_size=3, unique=True)) if kind == "enum" else None
        schema[name] = {"type": kind, "optional": draw(st.booleans()), **({"values": values} if values else {})}
    return schema


def value_of(draw: Any, spec: dict[str, Any]) -> Any:
    kind = spec["type"]
    if spec["optional"] and draw(st.integers(0, 3)) == 0:
        return None
    return draw({"boolean": st.booleans(), "string": PLAIN, "integer": st.integers(-10**6, 10**6),
                 "number": st.floats(-1e6, 1e6, allow_nan=False), "date": st.just("2026-01-02"),
                 "datetime": st.just("2026-01-02T03:04:05Z"), "array": st.lists(PLAIN, max_size=3),
                 "enum": st.sampled_from(spec.get("values") or ["x"])}[kind])


def expected_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return ", ".join(value) if isinstance(value, list) else str(value)


@st.composite
def cases(draw: Any) -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, str | None]]]:
    """A schema, an outcome of it, and a body as parts: (text, None) or (placeholder, its name)."""
    schema = draw(schemas())
    outcome = {name: value_of(draw, spec) for name, spec in schema.items()}
    names = [*sms.CALL_PLACEHOLDERS, *(f"outcome.{name}" for name in schema)]
    parts: list[tuple[str, str | None]] = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            parts.append((draw(PLAIN), None))
        else:
            name = draw(st.sampled_from(names))
            parts.append((f"{{{{{draw(SPACE)}{name}{draw(SPACE)}}}}}", name))
    assume(any(text.strip() for text, _ in parts))
    return schema, outcome, parts


@given(cases())
@settings(max_examples=300, suppress_health_check=[HealthCheck.filter_too_much])
def test_property_every_placeholder_of_a_valid_template_renders_and_none_is_left(case):
    schema, outcome, parts = case
    body = "".join(text for text, _ in parts)
    checked, problems = against([{"name": "P", "body": body}], schema)
    assert problems == [] and checked is not None
    rendered = render(checked[0]["body"], outcome)
    values = {"call.from": CALLER, "call.to": OWN, "number.e164": OWN,
              **{f"outcome.{name}": value for name, value in outcome.items()}}
    assert rendered == "".join(text if name is None else expected_text(values[name]) for text, name in parts)
    assert "{{" not in rendered and "}}" not in rendered
    for _, name in parts:
        assert name is None or expected_text(values[name]) in rendered


@given(cases())
@settings(max_examples=150, suppress_health_check=[HealthCheck.filter_too_much])
def test_property_the_check_is_idempotent(case):
    schema, _, parts = case
    body = "".join(text for text, _ in parts)
    condition = {"field": next(iter(schema)), "op": "present"}
    first, _ = against([{"name": " P ", "body": body, "condition": condition}], schema)
    again, _ = against(first, schema)
    assert again == first
    assert check(first)[0] == first


@given(st.lists(st.sampled_from(["a", " ", "{", "}", "{{", "}}", ".", "\t", "call.from", "outcome.a", "call.x"]),
                max_size=16).map("".join))
@settings(max_examples=400)
def test_property_any_body_is_either_refused_at_its_body_or_renders_without_placeholder_text(body):
    assume(body.strip())
    checked, problems = check(one(body))
    if checked is None:
        assert problems and {tuple(loc) for loc, *_ in problems} == {(0, "body")}
        assert {kind for _, _, kind, _ in problems} <= {"malformed_placeholder", "unknown_placeholder"}
        with pytest.raises(ValueError):
            render(body, {"a": "x"})
    else:
        rendered = render(body, {"a": None})
        assert "{{" not in rendered and "}}" not in rendered


BREAKS = [  # one fault each: (the broken part of a template, where the problem is, its type)
    ({"name": ""}, ["name"], "string_too_short"), ({"body": "{{ call.x }}"}, ["body"], "unknown_placeholder"),
    ({"body": "Hi {{"}, ["body"], "malformed_placeholder"), ({"extra": 1}, ["extra"], "extra_forbidden"),
    ({"condition": {"field": "a", "op": "gt", "value": "1"}}, ["condition", "value"], "float_type"),
    ({"condition": {"field": "a", "op": "present", "value": 1}}, ["condition", "value"], "value_not_allowed"),
    ({"id": "smt_1"}, ["id"], "template_id"), ({"body": None}, ["body"], "string_type"),
]


@given(st.lists(st.sampled_from(BREAKS), min_size=1, max_size=10))
def test_property_every_fault_is_reported_at_once(picked):
    templates = [{"name": f"T{i}", "body": "Hi", **broken} for i, (broken, _, _) in enumerate(picked)]
    assert faults(templates) == [([i, *loc], kind) for i, (_, loc, kind) in enumerate(picked)]


@given(schemas())
def test_property_the_example_outcome_satisfies_its_schema_and_is_deterministic(schema):
    example = sms.example_outcome(schema)
    assert compile_schema(schema).validate(example) == example == sms.example_outcome(schema)


@given(schemas(), st.sampled_from(sms.OPS), st.integers(-3, 3) | st.booleans() | st.text("ab", max_size=2),
       st.data())
def test_property_eq_and_ne_and_present_and_absent_are_opposites(schema, op, value, data):
    field = data.draw(st.sampled_from([*schema, "missing"]))
    outcome = {name: value_of(data.draw, spec) for name, spec in schema.items()}
    condition = {"field": field, "op": op, "value": value}
    opposite = {"eq": "ne", "ne": "eq", "present": "absent", "absent": "present"}.get(op)
    if opposite:
        assert sms.holds(condition, outcome) is not sms.holds({**condition, "op": opposite}, outcome)
    elif isinstance(value, int) and not isinstance(value, bool):
        assert not (sms.holds(condition, outcome) and sms.holds({**condition, "op": "lt" if op == "gt" else "gt"},
                                                                 outcome))
