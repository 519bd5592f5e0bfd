"""The table of outcome field types is the one description of them: the compiler, the agent's
prompt, the scripted agent and the spoken answers all render from it."""

from __future__ import annotations

import copy

import pytest

from adapters.anthropic.prompts import agent_system_prompt, describe
from adapters.scripted.brain import question_for
from application.calling.ports import CallBrief
from domain.calls.outcome_schema import OutcomeSchema, compile_schema, definition_json_schema
from domain.calls.outcome_types import (
    FIELD_NAME_PATTERN,
    FIELD_TYPES,
    FIELD_TYPES_TABLE,
    Fault,
    field_type,
    is_field_name,
)
from domain.errors import OutcomeSchemaError

EVERY_TYPE = {
    f"a_{t.name}": {"type": t.name, **({"values": ["red", "green", "blue"]} if t.name == "enum" else {})}
    for t in FIELD_TYPES_TABLE
}
SPOKEN = {  # an answer per type and what it reads as
    "boolean": ("Yes, that's right.", True),
    "string": ("Blue, with a white door.", "Blue, with a white door."),
    "datetime": ("Make it 2026-03-08T14:30:00+01:00 please", "2026-03-08T13:30:00Z"),
    "date": ("On 2026-03-08.", "2026-03-08"),
    "integer": ("About 4.", 4),
    "number": ("It was 12.5", 12.5),
    "enum": ("green I think", "green"),
    "array": ("milk, eggs and bread", ["milk", "eggs", "bread"]),
}


def test_the_table_names_every_type_once_in_the_order_the_docs_show():
    assert FIELD_TYPES == ("boolean", "string", "datetime", "date", "integer", "number", "enum", "array")
    assert [t.name for t in FIELD_TYPES_TABLE] == list(FIELD_TYPES)
    assert set(SPOKEN) == set(FIELD_TYPES)


def test_the_compiled_json_schema_uses_each_types_fragment():
    properties = compile_schema(EVERY_TYPE).json_schema["properties"]
    for t in FIELD_TYPES_TABLE:
        expected = dict(copy.deepcopy(dict(t.json_schema)))
        if t.name == "enum":
            expected["enum"] = ["red", "green", "blue"]
        assert properties[f"a_{t.name}"] == expected


def test_the_agent_prompt_lists_every_type_as_the_table_names_it():
    schema = compile_schema(EVERY_TYPE)
    prompt = agent_system_prompt(CallBrief(objective="Ask everything", schema=schema))
    for spec in schema.fields:
        kind = field_type(spec.type).kind(spec.values or ())
        assert f"- {spec.name} ({kind})" in prompt
    assert describe(schema.field("a_enum")) == '- a_enum (one of: "red", "green", "blue")'


def test_the_scripted_agent_asks_for_every_type_as_the_table_says():
    schema = compile_schema(EVERY_TYPE)
    for spec in schema.fields:
        assert question_for(spec).endswith(field_type(spec.type).ask(spec.values or ()))
    assert question_for(schema.field("a_enum")).endswith("? The options are red, green or blue.")
    assert question_for(schema.field("a_boolean")).endswith("? Yes or no?")


@pytest.mark.parametrize("type_name", FIELD_TYPES)
def test_a_spoken_answer_is_read_and_checked_by_its_type(type_name):
    schema = compile_schema(EVERY_TYPE)
    answer, expected = SPOKEN[type_name]
    assert schema.coerce(f"a_{type_name}", answer) == expected
    assert schema.coerce(f"a_{type_name}", "   ") is None


@pytest.mark.parametrize("type_name", FIELD_TYPES)
def test_each_type_checks_its_values(type_name):
    check = field_type(type_name).check
    assert isinstance(check(object(), ("red",)), Fault)
    _, expected = SPOKEN[type_name]
    values = ("green",) if type_name == "enum" else ()
    assert check(expected, values) == expected


def test_one_field_name_rule_for_the_compiler_and_the_docs():
    assert is_field_name("party_size") and is_field_name("a" * 64)
    assert not any(is_field_name(name) for name in ("Party", "1st", "_x", "a" * 65, "", 7, None))
    with pytest.raises(OutcomeSchemaError) as caught:
        compile_schema({"Bad": {"type": "string"}})
    assert caught.value.problems == [(["Bad"], f"field names must match {FIELD_NAME_PATTERN}", "field_name_invalid")]
    assert definition_json_schema()["propertyNames"] == {"pattern": FIELD_NAME_PATTERN}


def test_the_definition_json_schema_lists_the_types_of_the_table():
    definition = definition_json_schema()["additionalProperties"]
    assert definition["properties"]["type"]["enum"] == list(FIELD_TYPES)
    for t in FIELD_TYPES_TABLE:
        assert t.summary in definition["properties"]["type"]["description"]


def test_the_value_is_its_own_copy_and_of_accepts_a_definition_or_the_value():
    schema = OutcomeSchema.compile(EVERY_TYPE)
    assert copy.deepcopy(schema) is schema and copy.copy(schema) is schema
    assert OutcomeSchema.of(schema) is schema
    assert OutcomeSchema.of(schema.to_definition()) == schema
    assert hash(OutcomeSchema.of(schema.to_definition())) == hash(schema)
