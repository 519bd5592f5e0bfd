"""The caller's outcome_schema (SPEC.md "Call create request", "Call" outcome; ARCHITECTURE.md §7 extraction).

Compile once and list every problem; validate outcomes strictly; coerce spoken answers leniently.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from domain.calls.outcome_schema import FIELD_TYPES, FieldSpec, OutcomeSchema, compile_schema
from domain.errors import OutcomeInvalidError, OutcomeSchemaError

UTC = timezone.utc
NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")

EVERY_TYPE = {
    "confirmed": {"type": "boolean", "description": "Did the callee confirm?"},
    "notes": {"type": "string", "optional": True},
    "callback_at": {"type": "datetime", "optional": True},
    "visit_on": {"type": "date"},
    "party_size": {"type": "integer"},
    "budget": {"type": "number", "optional": False},
    "slot": {"type": "enum", "values": ["morning", "afternoon", "evening"]},
    "allergies": {"type": "array", "optional": True},
}
CONFORMING = {
    "confirmed": True,
    "visit_on": "2026-03-08",
    "party_size": 4,
    "budget": 120.5,
    "slot": "evening",
}


def problems_of(definition: Any) -> list[tuple[list[str | int], str]]:
    with pytest.raises(OutcomeSchemaError) as caught:
        compile_schema(definition)
    assert caught.value.code == "outcome_schema_invalid"
    return [(loc, kind) for loc, _msg, kind in caught.value.problems]


def outcome_problems(schema: OutcomeSchema, outcome: Any) -> list[tuple[list[str | int], str]]:
    with pytest.raises(OutcomeInvalidError) as caught:
        schema.validate(outcome)
    assert caught.value.code == "outcome_invalid"
    return [(loc, kind) for loc, _msg, kind in caught.value.problems]


# --- compile ---------------------------------------------------------------------------------


def test_a_schema_compiles_to_ordered_field_specs_with_defaults():
    schema = compile_schema(EVERY_TYPE)
    assert [f.name for f in schema.fields] == list(EVERY_TYPE)
    assert schema.field("confirmed") == FieldSpec("confirmed", "boolean", False, "Did the callee confirm?", None)
    assert schema.field("notes").optional is True
    assert schema.field("slot").values == ("morning", "afternoon", "evening")
    with pytest.raises(KeyError):
        schema.field("nope")


def test_the_json_schema_is_2020_12_with_one_property_per_type():
    js = compile_schema(EVERY_TYPE).json_schema
    assert js["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert js["type"] == "object"
    assert js["additionalProperties"] is False
    assert js["required"] == ["confirmed", "visit_on", "party_size", "budget", "slot"]
    props = js["properties"]
    assert props["confirmed"] == {"type": "boolean", "description": "Did the callee confirm?"}
    assert props["notes"] == {"type": ["string", "null"]}
    assert props["callback_at"] == {"type": ["string", "null"], "format": "date-time"}
    assert props["visit_on"] == {"type": "string", "format": "date"}
    assert props["party_size"] == {"type": "integer"}
    assert props["budget"] == {"type": "number"}
    assert props["slot"] == {"type": "string", "enum": ["morning", "afternoon", "evening"]}
    assert props["allergies"] == {"type": ["array", "null"], "items": {"type": "string"}}


def test_an_optional_enum_admits_null_in_its_json_schema():
    js = compile_schema({"slot": {"type": "enum", "values": ["a"], "optional": True}}).json_schema
    assert js["properties"]["slot"] == {"type": ["string", "null"], "enum": ["a", None]}
    assert js["required"] == []


def test_the_compiled_json_schema_cannot_be_changed_through_its_accessor():
    schema = compile_schema(EVERY_TYPE)
    schema.json_schema["properties"].clear()
    assert "confirmed" in schema.json_schema["properties"]


def test_the_canonical_definition_compiles_to_the_same_schema():
    schema = compile_schema(EVERY_TYPE)
    assert compile_schema(schema.to_definition()) == schema
    assert schema.to_definition()["notes"] == {"type": "string", "optional": True}


@pytest.mark.parametrize("definition", [None, [], "boolean", 3])
def test_a_schema_that_is_not_an_object_is_refused(definition):
    assert problems_of(definition) == [([], "dict_type")]


def test_a_schema_needs_at_least_one_field():
    assert problems_of({}) == [([], "too_short")]


def test_a_schema_has_at_most_fifty_fields():
    assert compile_schema({f"f{i}": {"type": "string"} for i in range(50)})
    assert problems_of({f"f{i}": {"type": "string"} for i in range(51)}) == [([], "too_long")]


@pytest.mark.parametrize("name", ["Name", "1st", "", "_x", "a-b", "a b", "caf\u00e9", "a" * 65, "x\n"])
def test_field_names_must_be_lowercase_identifiers(name):
    assert problems_of({name: {"type": "string"}}) == [([name], "field_name_invalid")]


def test_the_longest_field_name_is_sixty_four_characters():
    assert compile_schema({"a" * 64: {"type": "string"}}).fields[0].name == "a" * 64


def test_every_problem_of_a_schema_is_listed_not_just_the_first():
    found = problems_of({
        "Bad": {"type": "string"},
        "no_type": {"optional": True},
        "odd_type": {"type": "money"},
        "extra": {"type": "string", "format": "email"},
        "flag": {"type": "boolean", "optional": "yes", "description": 7},
        "long": {"type": "string", "description": "x" * 501},
        "plain": {"type": "string", "values": ["a"]},
        "not_obj": "string",
        "e1": {"type": "enum"},
        "e2": {"type": "enum", "values": []},
        "e3": {"type": "enum", "values": "a,b"},
        "e4": {"type": "enum", "values": ["a", 1, "a", " "]},
    })
    assert found == [
        (["Bad"], "field_name_invalid"),
        (["no_type", "type"], "missing"),
        (["odd_type", "type"], "enum"),
        (["extra", "format"], "extra_forbidden"),
        (["flag", "optional"], "bool_type"),
        (["flag", "description"], "string_type"),
        (["long", "description"], "string_too_long"),
        (["plain", "values"], "extra_forbidden"),
        (["not_obj"], "dict_type"),
        (["e1", "values"], "missing"),
        (["e2", "values"], "too_short"),
        (["e3", "values"], "list_type"),
        (["e4", "values", 1], "string_type"),
        (["e4", "values", 2], "unique_items"),
        (["e4", "values", 3], "string_too_short"),
    ]


def test_a_description_of_exactly_five_hundred_characters_is_accepted():
    assert compile_schema({"a": {"type": "string", "description": "x" * 500}}).fields[0].description == "x" * 500


@pytest.mark.parametrize("optional", [1, 0, "true", None])
def test_optional_must_be_a_boolean(optional):
    assert problems_of({"a": {"type": "string", "optional": optional}}) == [(["a", "optional"], "bool_type")]


@settings(max_examples=100)
@given(st.text(max_size=70))
def test_property_a_field_name_outside_the_pattern_is_refused(name):
    assume(NAME.fullmatch(name) is None)
    assert problems_of({name: {"type": "string"}}) == [([name], "field_name_invalid")]


# --- validate --------------------------------------------------------------------------------


def test_a_conforming_outcome_validates_and_absent_optionals_stay_absent():
    assert compile_schema(EVERY_TYPE).validate(CONFORMING) == CONFORMING


def test_optional_fields_may_be_null_but_required_ones_may_not():
    schema = compile_schema(EVERY_TYPE)
    assert schema.validate({**CONFORMING, "notes": None})["notes"] is None
    assert outcome_problems(schema, {**CONFORMING, "slot": None}) == [(["slot"], "string_type")]


def test_every_problem_of_an_outcome_is_listed():
    schema = compile_schema(EVERY_TYPE)
    found = outcome_problems(schema, {
        "confirmed": "yes", "visit_on": "2026-02-30", "party_size": True, "budget": "12",
        "slot": "night", "callback_at": "2026-03-08T10:00:00", "allergies": ["nuts", 3], "mood": "ok",
    })
    assert found == [
        (["mood"], "extra_forbidden"),
        (["confirmed"], "bool_type"),
        (["callback_at"], "timezone_aware"),
        (["visit_on"], "date_parsing"),
        (["party_size"], "int_type"),
        (["budget"], "float_type"),
        (["slot"], "enum"),
        (["allergies", 1], "string_type"),
    ]


def test_missing_required_fields_are_each_reported():
    assert outcome_problems(compile_schema(EVERY_TYPE), {"party_size": 2}) == [
        (["confirmed"], "missing"), (["visit_on"], "missing"), (["budget"], "missing"), (["slot"], "missing"),
    ]


@pytest.mark.parametrize("outcome", [None, [], "x"])
def test_an_outcome_that_is_not_an_object_is_refused(outcome):
    assert outcome_problems(compile_schema(EVERY_TYPE), outcome) == [([], "dict_type")]


@pytest.mark.parametrize("value,expected", [(3, 3), (3.0, 3), (-0.0, 0), (10**20, 10**20)])
def test_integers_accept_integer_valued_floats_and_normalize_them(value, expected):
    result = compile_schema({"n": {"type": "integer"}}).validate({"n": value})["n"]
    assert result == expected and type(result) is int


@pytest.mark.parametrize("value", [True, False, 3.5, "3", math.inf, math.nan, None, [3]])
def test_integers_refuse_booleans_fractions_and_strings(value):
    assert outcome_problems(compile_schema({"n": {"type": "integer"}}), {"n": value}) == [(["n"], "int_type")]


def test_numbers_accept_integers_and_floats_but_not_booleans_or_non_finite_values():
    schema = compile_schema({"x": {"type": "number"}})
    assert schema.validate({"x": 2}) == {"x": 2}
    assert schema.validate({"x": 2.5}) == {"x": 2.5}
    assert outcome_problems(schema, {"x": True}) == [(["x"], "float_type")]
    assert outcome_problems(schema, {"x": math.inf}) == [(["x"], "finite_number")]
    assert outcome_problems(schema, {"x": math.nan}) == [(["x"], "finite_number")]


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2026-03-08T10:00:00Z", "2026-03-08T10:00:00Z"),
        ("2026-03-08T10:00:00+00:00", "2026-03-08T10:00:00Z"),
        ("2026-03-08T10:00:00-05:00", "2026-03-08T15:00:00Z"),
        ("2026-03-08T01:30+05:30", "2026-03-07T20:00:00Z"),
        ("2026-03-08T10:00:00.250+01:00", "2026-03-08T09:00:00.250000Z"),
    ],
)
def test_datetimes_need_an_offset_and_are_normalized_to_utc(value, expected):
    assert compile_schema({"at": {"type": "datetime"}}).validate({"at": value}) == {"at": expected}


@pytest.mark.parametrize(
    "value,kind",
    [
        ("2026-03-08T10:00:00", "timezone_aware"),
        ("2026-03-08", "datetime_parsing"),
        ("tomorrow at ten", "datetime_parsing"),
        ("2026-02-30T10:00:00Z", "datetime_parsing"),
        ("\uff12026-03-08T10:00:00Z", "datetime_parsing"),
        (1772964000, "string_type"),
    ],
)
def test_datetimes_without_offset_or_not_iso_8601_are_refused(value, kind):
    assert outcome_problems(compile_schema({"at": {"type": "datetime"}}), {"at": value}) == [(["at"], kind)]


@pytest.mark.parametrize("value", ["2026-02-29", "2026-3-8", "08/03/2026", "2026-03-08T00:00:00Z", "20260308", 20260308])
def test_dates_must_be_real_calendar_days_written_yyyy_mm_dd(value):
    assert outcome_problems(compile_schema({"d": {"type": "date"}}), {"d": value}) == [(["d"], "date_parsing")]


def test_enum_membership_is_exact():
    schema = compile_schema({"slot": {"type": "enum", "values": ["morning", "evening"]}})
    assert schema.validate({"slot": "morning"}) == {"slot": "morning"}
    assert outcome_problems(schema, {"slot": "Morning"}) == [(["slot"], "enum")]


def test_arrays_hold_strings_only():
    schema = compile_schema({"items": {"type": "array"}})
    assert schema.validate({"items": ("a", "b")}) == {"items": ["a", "b"]}
    assert schema.validate({"items": []}) == {"items": []}
    assert outcome_problems(schema, {"items": "a, b"}) == [(["items"], "list_type")]
    assert outcome_problems(schema, {"items": ["a", None, 2]}) == [(["items", 1], "string_type"), (["items", 2], "string_type")]


# --- generated schemas and outcomes ----------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
enum_values = st.lists(st.text(min_size=1, max_size=12).filter(str.strip), min_size=1, max_size=5, unique=True)


@st.composite
def field_definitions(draw: st.DrawFn) -> dict[str, Any]:
    type_ = draw(st.sampled_from(FIELD_TYPES))
    definition: dict[str, Any] = {"type": type_}
    if draw(st.booleans()):
        definition["optional"] = draw(st.booleans())
    if draw(st.booleans()):
        definition["description"] = draw(st.text(max_size=40))
    if type_ == "enum":
        definition["values"] = draw(enum_values)
    return definition


schemas = st.dictionaries(names, field_definitions(), min_size=1, max_size=8)
offsets = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
moments = st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2100, 12, 30), timezones=offsets)


def conforming_value(spec: FieldSpec) -> st.SearchStrategy[tuple[Any, Any]]:
    """(value as sent, value after normalization)"""
    same = lambda s: s.map(lambda v: (v, v))  # noqa: E731
    if spec.type == "boolean":
        return same(st.booleans())
    if spec.type == "string":
        return same(st.text(max_size=30))
    if spec.type == "integer":
        return st.integers(-(10**12), 10**12).flatmap(lambda n: st.sampled_from([(n, n), (float(n), n)]))
    if spec.type == "number":
        return same(st.integers() | st.floats(allow_nan=False, allow_infinity=False))
    if spec.type == "enum":
        return same(st.sampled_from(spec.values))
    if spec.type == "datetime":
        return moments.map(lambda m: (m.isoformat(), m.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"))
    if spec.type == "date":
        return same(st.dates().map(lambda d: d.isoformat()))
    return same(st.lists(st.text(max_size=10), max_size=4))


@st.composite
def schema_and_outcome(draw: st.DrawFn) -> tuple[OutcomeSchema, dict[str, Any], dict[str, Any]]:
    schema = compile_schema(draw(schemas))
    sent: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for spec in schema.fields:
        choice = draw(st.sampled_from(["value", "null", "absent"])) if spec.optional else "value"
        if choice == "value":
            sent[spec.name], expected[spec.name] = draw(conforming_value(spec))
        elif choice == "null":
            sent[spec.name] = expected[spec.name] = None
    return schema, sent, expected


@settings(max_examples=150)
@given(schemas)
def test_property_a_generated_schema_compiles_and_its_json_schema_matches_its_fields(definition):
    schema = compile_schema(definition)
    js = schema.json_schema
    assert list(js["properties"]) == list(definition)
    assert js["required"] == [name for name, d in definition.items() if not d.get("optional", False)]
    assert compile_schema(schema.to_definition()) == schema


@settings(max_examples=100)
@given(schema_and_outcome())
def test_property_a_conforming_outcome_validates_to_its_normal_form_and_validation_is_idempotent(case):
    schema, sent, expected = case
    normalized = schema.validate(sent)
    assert normalized == expected
    assert schema.validate(normalized) == normalized


WRONG = {
    "boolean": [(1, "bool_type"), ("true", "bool_type")],
    "string": [(5, "string_type"), (["a"], "string_type")],
    "integer": [(True, "int_type"), (2.5, "int_type"), ("3", "int_type")],
    "number": [("3", "float_type"), (False, "float_type"), (math.inf, "finite_number")],
    "enum": [(7, "string_type")],
    "datetime": [("2026-03-08T10:00:00", "timezone_aware"), ("soon", "datetime_parsing")],
    "date": [("2026-02-30", "date_parsing"), ("2026-03-08T10:00Z", "date_parsing")],
    "array": [("a", "list_type"), ({"a": 1}, "list_type")],
}


@settings(max_examples=120)
@given(schema_and_outcome(), st.data())
def test_property_a_mutated_outcome_fails_with_the_matching_problem(case, data):
    schema, sent, _ = case
    required = [spec for spec in schema.fields if not spec.optional]
    kinds = ["unknown", "wrong_type", "not_in_enum"] + (["drop"] if required else [])
    kind = data.draw(st.sampled_from(kinds))
    mutated = dict(sent)
    if kind == "drop":
        spec = data.draw(st.sampled_from(required))
        del mutated[spec.name]
        expected = ([spec.name], "missing")
    elif kind == "unknown":
        extra = data.draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in sent and NAME.fullmatch(k) is None))
        mutated[extra] = data.draw(st.none() | st.integers() | st.text())
        expected = ([extra], "extra_forbidden")
    elif kind == "wrong_type":
        spec = data.draw(st.sampled_from(schema.fields))
        mutated[spec.name], code = data.draw(st.sampled_from(WRONG[spec.type]))
        expected = ([spec.name], code)
    else:
        enums = [spec for spec in schema.fields if spec.type == "enum"]
        assume(enums)
        spec = data.draw(st.sampled_from(enums))
        mutated[spec.name] = "|".join(spec.values) + "?"
        expected = ([spec.name], "enum")
    assert outcome_problems(schema, mutated) == [expected]


# --- coerce ----------------------------------------------------------------------------------

COERCE = compile_schema(EVERY_TYPE | {"tags": {"type": "array", "optional": True}, "pay": {"type": "enum", "optional": True, "values": ["credit card", "card", "cash", "bank_transfer"]}})


@pytest.mark.parametrize(
    "text,expected",
    [
        ("yes", True), ("Yeah.", True), ("yep, that's right", True), ("Correct", True), ("sure thing", True),
        ("true", True), ("of course", True), ("no problem", True),
        ("no", False), ("Nope", False), ("nah", False), ("false", False), ("not really", False),
        ("that's not correct", False), ("absolutely not", False), ("we don't", False),
        ("I'm not sure", None), ("maybe", None), ("yes and no", None), ("I don't know", None), ("", None),
        ("the weather is nice", None),
    ],
)
def test_coerce_reads_yes_and_no_answers_as_booleans(text, expected):
    assert COERCE.coerce(COERCE.field("confirmed"), text) is expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("4", 4), ("we are 4 people", 4), ("four", 4), ("Twenty", 20), ("zero", 0), ("none", 0), ("1,200", 1200),
        ("4.0", 4), ("-3", -3), ("4.5", None), ("3 or 4", None), ("two or three", None), ("5-6", None),
        ("a few", None), ("twenty five", None),
    ],
)
def test_coerce_reads_integers_from_digits_and_small_number_words(text, expected):
    assert COERCE.coerce("party_size", text) == expected


@pytest.mark.parametrize("text,expected", [("about 120.50 dollars", 120.5), ("eleven", 11), ("300", 300), ("lots", None)])
def test_coerce_reads_numbers(text, expected):
    assert COERCE.coerce("budget", text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Evening", "evening"), ("the morning works best", "morning"), ("MORNING!", "morning"),
        ("morning or evening", None), ("night", None),
    ],
)
def test_coerce_picks_the_one_enum_value_named_in_the_answer(text, expected):
    assert COERCE.coerce("slot", text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [("by credit card", "credit card"), ("card", "card"), ("bank transfer please", "bank_transfer"), ("card or cash", None)],
)
def test_coerce_prefers_the_longest_enum_value_and_reads_underscores_as_spaces(text, expected):
    assert COERCE.coerce("pay", text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2026-03-08T10:00:00-05:00", "2026-03-08T15:00:00Z"),
        ("call back at 2026-03-08T10:00Z please", "2026-03-08T10:00:00Z"),
        ("2026-03-08T10:00:00", None),
        ("tomorrow at ten", None),
    ],
)
def test_coerce_reads_iso_datetimes_with_an_offset_only(text, expected):
    assert COERCE.coerce("callback_at", text) == expected


@pytest.mark.parametrize("text,expected", [("2026-03-08", "2026-03-08"), ("on 2028-02-29.", "2028-02-29"), ("2026-02-29", None), ("March 8", None)])
def test_coerce_reads_yyyy_mm_dd_dates(text, expected):
    assert COERCE.coerce("visit_on", text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [("peanuts, shellfish and dairy.", ["peanuts", "shellfish", "dairy"]), ("gluten", ["gluten"]), ("a; b & c", ["a", "b", "c"]), (" , ", None)],
)
def test_coerce_splits_lists_on_commas_and_and(text, expected):
    assert COERCE.coerce("tags", text) == expected


def test_coerce_keeps_a_string_answer_stripped_and_refuses_a_blank_one():
    assert COERCE.coerce("notes", "  ring twice  ") == "ring twice"
    assert COERCE.coerce("notes", "   ") is None
    assert COERCE.coerce("notes", None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["Sorry, I don't know that.", "I'm not sure", "No idea.", "I\u2019m afraid I don't know", "dunno"])
def test_coerce_reads_an_admission_of_not_knowing_as_no_string_or_list(text):
    assert COERCE.coerce("notes", text) is None
    assert COERCE.coerce("tags", text) is None


def test_coerce_keeps_a_string_that_only_starts_with_doubt():
    assert COERCE.coerce("notes", "I don't know, maybe Tuesday") == "I don't know, maybe Tuesday"


@settings(max_examples=200)
@given(st.sampled_from(COERCE.fields), st.text(max_size=40) | st.sampled_from(["yes", "no", "3", "four", "2026-03-08", "card and cash"]))
def test_property_a_coerced_answer_is_none_or_valid_for_its_field(spec, text):
    value = COERCE.coerce(spec, text)
    if value is not None:
        assert COERCE.validate({**CONFORMING, spec.name: value})[spec.name] == value


@settings(max_examples=150)
@given(st.data())
def test_property_a_plainly_written_value_coerces_back_to_itself(data):
    spec = data.draw(st.sampled_from([f for f in COERCE.fields if f.type != "string"]))
    if spec.type == "boolean":
        value = data.draw(st.booleans())
        text = "yes" if value else "no"
    elif spec.type in ("integer", "number"):
        value = data.draw(st.integers(-(10**9), 10**9) if spec.type == "integer" else st.integers(-10**6, 10**6).map(lambda n: n / 100))
        text = str(value)
    elif spec.type == "enum":
        value = data.draw(st.sampled_from(spec.values))
        text = value
    elif spec.type == "date":
        value = data.draw(st.dates()).isoformat()
        text = value
    elif spec.type == "datetime":
        moment = data.draw(moments)
        text, value = moment.isoformat(), moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"
    else:
        value = data.draw(st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True).filter(lambda w: w != "and"), min_size=1, max_size=4))
        text = ", ".join(value)
    assert COERCE.coerce(spec, text) == value


@settings(max_examples=100)
@given(schemas)
def test_property_the_stored_form_rebuilds_an_equal_value_new_or_old(definition):
    """docs/events.md Queued: ``{"_type_": "outcome_schema", "_data_": <definition>}``, or the plain
    definition of events stored before; both read back as the same value."""
    from eventsourcing.persistence import JSONTranscoder

    from application.calling.app import OutcomeSchemaAsDefinition

    transcoder = JSONTranscoder()
    transcoder.register(OutcomeSchemaAsDefinition())
    schema = OutcomeSchema.compile(definition)
    stored = transcoder.encode({"outcome_schema": schema})
    assert json.loads(stored) == {"outcome_schema": {"_type_": "outcome_schema", "_data_": schema.to_definition()}}
    assert transcoder.decode(stored)["outcome_schema"] == schema
    old = transcoder.decode(transcoder.encode({"outcome_schema": schema.to_definition()}))["outcome_schema"]
    assert OutcomeSchema.of(old) == schema
