"""One call record (issue 31 item 3): ``CallRecord`` is what ``GET /v1/calls/{id}`` answers and the
OpenAPI document shows; every other view of a call carries a subset of its fields, typed alike and
showing the same values, so a field added or renamed in one place and missed in another fails
here: the calls list row (``CallSummary``), the CSV export's columns, the ``call.completed``
payload (SPEC.md Events 3) and the Python client's ``Call`` type."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from callwright_client.types import Call as ClientCall
from entrypoints.http.controllers.calls import CallsController
from entrypoints.http.schemas.call_record import CallRecord
from entrypoints.http.schemas.list_rows import CallSummary
from projections.calls_list.csv_export import CSV_COLUMNS
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "call_events" / "release_0_1_0.json"
SUMMARY_ONLY = {"has_outcome"}  # the list row's one field of its own: whether an outcome is there


def wire_fields(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """Wire name -> msgspec's type of each field."""
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.encode_name: f.type for f in info.fields}


def kinds(type_: Any) -> set[str]:
    """The JSON kinds a type admits (a Literal of strings is a string, an optional adds null)."""
    if isinstance(type_, msgspec.inspect.UnionType):
        return set().union(*(kinds(t) for t in type_.types))
    if isinstance(type_, msgspec.inspect.LiteralType):
        return {type(v).__name__ for v in type_.values}
    return {type(type_).__name__.removesuffix("Type").lower()}


def test_the_list_row_is_a_subset_of_the_record_typed_alike():
    record, summary = wire_fields(CallRecord), wire_fields(CallSummary)
    assert set(summary) - set(record) == SUMMARY_ONLY
    different = {name: (kinds(record[name]), kinds(type_)) for name, type_ in summary.items()
                 if name in record and not kinds(record[name]) <= kinds(type_)}
    assert different == {}, "list columns that cannot hold what the record holds"


def test_the_csv_columns_are_fields_of_the_record():
    assert set(CSV_COLUMNS) <= set(wire_fields(CallRecord))


def test_the_read_handler_is_annotated_with_the_record():
    """The Struct is the read route's answer type, not a description kept beside a dict."""
    for name in ("read", "cancel"):
        handler = getattr(CallsController, name).fn
        annotation = inspect.signature(handler).return_annotation
        assert "CallRecord" in str(annotation), (name, annotation)
    source = inspect.getsource(inspect.getmodule(CallsController))
    assert "type: ignore[return-value]" not in source


def test_the_client_call_names_every_field_of_the_documented_record(client):
    schema = client.get("/schema/openapi.json").json()["components"]["schemas"]["CallRecord"]
    documented = set(schema["properties"])
    assert documented == set(wire_fields(CallRecord))
    aliases = {"from_number": "from"}
    named = {aliases.get(f.name, f.name) for f in dataclasses.fields(ClientCall) if f.name != "raw"}
    assert named == documented, {"missing from the client": sorted(documented - named),
                                 "not in the record": sorted(named - documented)}


TERMINAL = {name: call for name, call in json.loads(FIXTURE.read_text())["calls"].items() if call["webhook"]}


@pytest.mark.parametrize("name", sorted(TERMINAL))
def test_the_call_completed_payload_shows_the_records_values(name):
    recorded = TERMINAL[name]
    data, record = recorded["webhook"]["data"], recorded["record"]
    assert set(data) <= set(record)
    assert {key: value for key, value in data.items() if record[key] != value} == {}


def test_the_payload_builder_names_only_record_fields():
    """``domain/webhooks/payload.py`` spells its keys; each must be a record field."""
    source = Path(inspect.getfile(__import__("domain.webhooks.payload", fromlist=["x"]))).read_text()
    tree = ast.parse(source)
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "call_completed")
    keys = {node.value for node in ast.walk(function) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.isidentifier()}
    envelope = {"id", "type", "created_at", "data"}
    assert keys - envelope <= set(wire_fields(CallRecord)) | {"from"}
