"""The size limits of a request's ``outcome_schema``: enum values per field, each value's length
and the whole definition's size; every problem listed with the limit in its ``ctx``, and none of
them applied to a stored definition (decision 30: a stricter rule still accepts what was stored)."""

from __future__ import annotations

import pytest

from domain.calls.outcome_limits import MAX_ENUM_VALUE_LENGTH, MAX_ENUM_VALUES, MAX_SCHEMA_BYTES, schema_bytes
from domain.calls.outcome_schema import OutcomeSchema, definition_json_schema
from domain.errors import OutcomeSchemaError


def refusal(definition) -> list[tuple[list, str, dict]]:
    with pytest.raises(OutcomeSchemaError) as caught:
        OutcomeSchema.compile(definition)
    return [(loc, kind, ctx) for (loc, _, kind, _), ctx in zip(caught.value.details, caught.value.contexts, strict=True)]


def enum(values: list[str]) -> dict:
    return {"type": "enum", "values": values}


def test_the_limits_are_the_documented_ones():
    assert (MAX_ENUM_VALUES, MAX_ENUM_VALUE_LENGTH, MAX_SCHEMA_BYTES) == (100, 100, 16_384)


def test_an_enum_of_the_maximum_size_is_accepted():
    values = [f"{n:03}" + "v" * (MAX_ENUM_VALUE_LENGTH - 3) for n in range(MAX_ENUM_VALUES)]
    definition = {"pick": enum(values[:50]), "other": enum(values[50:])}
    assert schema_bytes(definition) <= MAX_SCHEMA_BYTES

    assert len(OutcomeSchema.compile(definition).field("pick").values) == 50


def test_an_enum_with_too_many_values_is_refused_with_the_limit():
    assert refusal({"pick": enum([f"v{n}" for n in range(MAX_ENUM_VALUES + 1)])}) == [
        (["outcome_schema", "pick", "values"], "too_long", {"max_length": MAX_ENUM_VALUES})]


def test_a_huge_enum_is_refused_without_reading_every_value():
    found = refusal({"pick": enum(["x" * 200] * 100_000)})

    assert len(found) < MAX_ENUM_VALUES + 5
    assert (["outcome_schema", "pick", "values"], "too_long", {"max_length": MAX_ENUM_VALUES}) in found
    assert (["outcome_schema"], "too_long", {"max_bytes": MAX_SCHEMA_BYTES}) in found


def test_a_long_enum_value_is_refused_at_its_place():
    assert refusal({"pick": enum(["ok", "y" * (MAX_ENUM_VALUE_LENGTH + 1)])}) == [
        (["outcome_schema", "pick", "values", 1], "string_too_long", {"max_length": MAX_ENUM_VALUE_LENGTH})]


def test_a_schema_over_the_size_limit_is_refused_with_the_limit():
    definition = {f"field_{n}": {"type": "string", "description": "d" * 400} for n in range(45)}

    assert refusal(definition) == [(["outcome_schema"], "too_long", {"max_bytes": MAX_SCHEMA_BYTES})]


def test_every_problem_is_listed_together():
    definition = {"a": enum([str(n) for n in range(101)]), "b": enum(["z" * 101]), "c": {"type": "nope"}}

    assert [(loc, kind) for loc, kind, _ in refusal(definition)] == [
        (["outcome_schema", "a", "values"], "too_long"),
        (["outcome_schema", "b", "values", 0], "string_too_long"),
        (["outcome_schema", "c", "type"], "enum"),
    ]


def test_the_existing_limits_carry_their_ctx_too():
    definition = {f"f{n}": {"type": "string"} for n in range(51)}
    assert (["outcome_schema"], "too_long", {"max_length": 50}) in refusal(definition)
    assert refusal({"a": {"type": "string", "description": "d" * 501}}) == [
        (["outcome_schema", "a", "description"], "string_too_long", {"max_length": 500})]


def test_a_stored_definition_is_compiled_without_the_request_limits():
    definition = {"pick": enum([f"{n} " + "w" * 150 for n in range(300)])}

    assert len(OutcomeSchema.compile(definition, limits=False).field("pick").values) == 300
    assert len(OutcomeSchema.of(definition).field("pick").values) == 300


def test_the_openapi_definition_documents_the_limits():
    described = definition_json_schema()
    values = described["additionalProperties"]["properties"]["values"]

    assert values["maxItems"] == MAX_ENUM_VALUES
    assert values["items"]["maxLength"] == MAX_ENUM_VALUE_LENGTH
    assert str(MAX_SCHEMA_BYTES) in described["description"]
