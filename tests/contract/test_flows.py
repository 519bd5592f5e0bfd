"""Flows over HTTP (SPEC.md Flow and its state table; issue 15 items 2 and 3; docs/flows.md):
draft, edit, preview (nothing stored), publish (the compiled artifact frozen), list and read, and
a number bound to a published flow."""

from __future__ import annotations

import copy
import itertools
import time
from typing import Any

import pytest

from domain.accounts import scopes
from domain.flows.flow import Flow
from tests.support.call_requests import LONDON, error_code, only_problem, problems
from tests.support.setup import Account, carrier_tenant, new_tenant, scoped_key
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

GRAPH: dict[str, Any] = {
    "start": "greet",
    "nodes": [
        {"id": "greet", "type": "message", "text": "Hello from Acme Dental."},
        {"id": "ask", "type": "question", "text": "Can you come tomorrow?", "field": "confirmed",
         "field_type": "boolean"},
        {"id": "route", "type": "branch"},
        {"id": "pin", "type": "question", "text": "Please enter your 4 digit code.", "field": "pin",
         "field_type": "string", "keypad": {"ending_mode": "fixed-length", "length": 4}},
        {"id": "bye", "type": "end", "text": "See you tomorrow."},
        {"id": "desk", "type": "transfer", "destination": "Front desk"},
    ],
    "edges": [
        {"from": "greet", "to": "ask"}, {"from": "ask", "to": "route"},
        {"from": "route", "to": "desk", "when": {"field": "confirmed", "op": "eq", "value": False}},
        {"from": "route", "to": "pin"}, {"from": "pin", "to": "bye"},
    ],
    "clarify_on_uncertainty": {},
}
_numbers = itertools.count(10)


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


def drafted(client, tenant: Account, graph: dict[str, Any] | None = None, name: str = "Reminder") -> dict[str, Any]:
    created = client.post("/v1/flows", json={"name": name, "graph_json": graph or GRAPH}, headers=tenant.headers)
    assert created.status_code == 201, created.text
    return created.json()


def broken() -> dict[str, Any]:
    graph = copy.deepcopy(GRAPH)
    graph["nodes"].append({"id": "odd", "type": "snippet"})
    graph["edges"] = [e for e in graph["edges"] if e["from"] != "pin"]  # pin leads nowhere now
    return graph


def events_of(container, flow_id: str) -> int:
    return len(list(container.calling.repository.event_store.get(Flow.create_id(flow_id))))


def test_a_draft_is_stored_in_state_draft_with_nothing_published(client, tenant):
    flow = drafted(client, tenant)

    assert flow["id"].startswith("flw_") and (flow["state"], flow["draft_version"]) == ("draft", 1)
    assert (flow["published_version"], flow["published"], flow["graph_json"]) == (None, None, GRAPH)
    assert client.get(f"/v1/flows/{flow['id']}", headers=tenant.headers).json() == flow


def test_a_draft_that_does_not_compile_is_still_stored(client, tenant):
    flow = drafted(client, tenant, broken())
    assert (flow["state"], flow["graph_json"]["nodes"][-1]["id"]) == ("draft", "odd")


def test_preview_compiles_the_draft_or_an_unsaved_graph_and_stores_nothing(client, container, tenant):
    flow = drafted(client, tenant)
    before = events_of(container, flow["id"])

    good = client.post(f"/v1/flows/{flow['id']}/preview", headers=tenant.headers)
    bad = client.post(f"/v1/flows/{flow['id']}/preview", json={"graph_json": broken()}, headers=tenant.headers)

    assert good.status_code == 200 and good.json()["ok"] is True and good.json()["errors"] == []
    compiled = good.json()["compiled"]
    assert set(compiled) == {"objective", "outcome_schema", "tools", "system_prompt"}
    assert compiled["outcome_schema"]["confirmed"]["type"] == "boolean" and "pin" in compiled["outcome_schema"]
    assert "ask the caller to repeat" in compiled["system_prompt"]
    body = bad.json()
    assert (bad.status_code, body["ok"], body["compiled"]) == (200, False, None)
    assert {(e["node_id"], e["code"]) for e in body["errors"]} >= {("odd", "snippet_not_supported")}
    assert all(set(e) == {"node_id", "code", "message"} and e["node_id"] for e in body["errors"])
    assert events_of(container, flow["id"]) == before  # nothing appended
    assert client.get(f"/v1/flows/{flow['id']}", headers=tenant.headers).json() == flow


def test_publish_freezes_what_preview_showed_and_moves_the_flow_to_published(client, tenant):
    flow = drafted(client, tenant)
    shown = client.post(f"/v1/flows/{flow['id']}/preview", headers=tenant.headers).json()["compiled"]

    published = client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)

    assert published.status_code == 200, published.text
    body = published.json()
    assert (body["state"], body["published_version"], body["draft_version"]) == ("published", 1, 1)
    assert body["published"]["version"] == 1 and body["published"]["published_at"].endswith("Z")
    assert body["published"]["compiled"] == shown


def test_publishing_a_graph_that_does_not_compile_is_a_422_naming_each_node(client, container, tenant):
    flow = drafted(client, tenant, broken())
    before = events_of(container, flow["id"])

    found = problems(client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers))

    snippet = next(p for p in found if p["type"] == "snippet_not_supported")
    assert (snippet["loc"], snippet["ctx"]) == (["graph_json", "nodes", "odd"], {"node_id": "odd"})
    assert all(p["loc"][:2] == ["graph_json", "nodes"] and p["ctx"]["node_id"] == p["loc"][2] for p in found)
    assert events_of(container, flow["id"]) == before
    assert client.get(f"/v1/flows/{flow['id']}", headers=tenant.headers).json()["state"] == "draft"


def test_editing_a_published_draft_keeps_the_published_artifact_until_the_next_publish(client, tenant):
    flow = drafted(client, tenant)
    v1 = client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers).json()["published"]
    edited_graph = copy.deepcopy(GRAPH)
    edited_graph["nodes"][1]["text"] = "Can you come on Friday instead?"

    edited = client.patch(f"/v1/flows/{flow['id']}", json={"graph_json": edited_graph}, headers=tenant.headers)

    assert edited.status_code == 200, edited.text
    body = edited.json()
    assert (body["state"], body["draft_version"], body["published_version"]) == ("published", 2, 1)
    assert body["published"] == v1 and body["graph_json"] == edited_graph
    v2 = client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers).json()
    assert (v2["published_version"], v2["published"]["version"]) == (2, 2)
    assert "Friday" in v2["published"]["compiled"]["system_prompt"]
    assert "Friday" not in v1["compiled"]["system_prompt"]


def test_fixed_length_in_either_spelling_is_stored_and_answered_as_the_spec_spells_it(client, tenant):
    """SPEC.md Flow: ``keypad`` ``ending_mode`` modes are terminator, fixed-length, timeout.
    ``fixed_length`` is accepted as an alias; the draft, its preview and its publish show
    ``fixed-length`` whichever spelling came in."""
    aliased = copy.deepcopy(GRAPH)
    aliased["nodes"][3]["keypad"]["ending_mode"] = "fixed_length"
    aliased["keypad"] = {"ending_mode": "fixed_length", "length": 6}
    flow = drafted(client, tenant, aliased)

    assert flow["graph_json"]["nodes"][3]["keypad"] == {"ending_mode": "fixed-length", "length": 4}
    assert flow["graph_json"]["keypad"] == {"ending_mode": "fixed-length", "length": 6}
    assert client.get(f"/v1/flows/{flow['id']}", headers=tenant.headers).json()["graph_json"] == flow["graph_json"]
    same = client.patch(f"/v1/flows/{flow['id']}", json={"graph_json": flow["graph_json"]}, headers=tenant.headers)
    assert same.json()["draft_version"] == 1  # the same draft, spelled the spec's way: nothing changed
    preview = client.post(f"/v1/flows/{flow['id']}/preview", json={"graph_json": aliased}, headers=tenant.headers)
    tools = {tool["name"]: tool for tool in preview.json()["compiled"]["tools"]}
    assert tools["collect_digits"]["fields"]["pin"]["ending_mode"] == "fixed-length"
    published = client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers).json()
    assert published["published"]["compiled"] == preview.json()["compiled"]


def test_patch_names_what_changes_and_refuses_null(client, tenant):
    flow = drafted(client, tenant)
    renamed = client.patch(f"/v1/flows/{flow['id']}", json={"name": "Renamed"}, headers=tenant.headers).json()
    assert (renamed["name"], renamed["draft_version"], renamed["graph_json"]) == ("Renamed", 2, GRAPH)
    same = client.patch(f"/v1/flows/{flow['id']}", json={"name": "Renamed"}, headers=tenant.headers).json()
    assert same["draft_version"] == 2  # nothing changed: no new draft
    nulls = problems(client.patch(f"/v1/flows/{flow['id']}", json={"name": None, "graph_json": None},
                                  headers=tenant.headers))
    assert sorted(tuple(p["loc"]) for p in nulls) == [("body", "graph_json"), ("body", "name")]


def test_the_list_has_every_state_newest_first_with_a_cursor(client, tenant):
    ids = [drafted(client, tenant, name=f"F{n}")["id"] for n in range(3)]
    client.post(f"/v1/flows/{ids[1]}/publish", headers=tenant.headers)

    everything = client.get("/v1/flows", headers=tenant.headers).json()
    first = client.get("/v1/flows", params={"limit": 2}, headers=tenant.headers).json()
    rest = client.get("/v1/flows", params={"limit": 2, "cursor": first["next_cursor"]}, headers=tenant.headers).json()
    published = client.get("/v1/flows", params={"state": "published"}, headers=tenant.headers).json()

    assert [(f["id"], f["state"]) for f in everything["data"]] == [
        (ids[2], "draft"), (ids[1], "published"), (ids[0], "draft")]
    assert [f["id"] for f in first["data"] + rest["data"]] == ids[::-1] and rest["next_cursor"] is None
    assert [f["id"] for f in published["data"]] == [ids[1]] and published["data"][0]["published_version"] == 1


def test_another_tenants_flow_is_404_everywhere(client, container, tenant):
    flow = drafted(client, tenant)
    other = new_tenant(client, container)
    for method, path in (("GET", ""), ("PATCH", ""), ("POST", "/preview"), ("POST", "/publish")):
        answered = client.request(method, f"/v1/flows/{flow['id']}{path}", headers=other.headers,
                                  json={"name": "x"} if method == "PATCH" else None)
        assert (answered.status_code, error_code(answered)) == (404, "flow_not_found"), (method, path)
    assert only_problem(client.get("/v1/flows/flw_nope", headers=tenant.headers))["type"] == "invalid_id"


@pytest.mark.parametrize("body,loc", [
    ({"graph_json": GRAPH}, ["body", "name"]),
    ({"name": "x"}, ["body", "graph_json"]),
    ({"name": "x", "graph_json": ["not", "an", "object"]}, ["body", "graph_json"]),
    ({"name": "x", "graph_json": GRAPH, "state": "published"}, ["body", "state"]),
])
def test_a_bad_create_body_is_a_422(client, tenant, body, loc):
    assert problems(client.post("/v1/flows", json=body, headers=tenant.headers))[0]["loc"][:2] == loc


def test_flows_take_their_own_scopes(client, tenant):
    flow = drafted(client, tenant)
    reader = scoped_key(client, tenant, [scopes.FLOWS_READ])
    assert client.get("/v1/flows", headers=reader).status_code == 200
    assert client.post(f"/v1/flows/{flow['id']}/preview", headers=reader).status_code == 200
    assert client.post(f"/v1/flows/{flow['id']}/publish", headers=reader).status_code == 403
    assert client.post("/v1/flows", json={"name": "x", "graph_json": GRAPH}, headers=reader).status_code == 403
    writer = scoped_key(client, tenant, [scopes.FLOWS_WRITE])
    assert client.post(f"/v1/flows/{flow['id']}/publish", headers=writer).status_code == 200
    assert client.get("/v1/flows", headers=writer).status_code == 403


def test_a_number_binds_only_a_published_flow_of_its_tenant(client, container, fake):
    e164 = f"+141555502{next(_numbers):02d}"
    tenant, _ = carrier_tenant(client, container, fake, [(e164, "Line")])
    number = client.post("/v1/numbers/byo", json={"e164": e164}, headers=tenant.headers).json()
    flow = drafted(client, tenant)

    draft_only = client.patch(f"/v1/numbers/{number['id']}", json={"flow_id": flow["id"]}, headers=tenant.headers)
    assert only_problem(draft_only)["type"] == "flow_not_found"
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)
    bound = client.patch(f"/v1/numbers/{number['id']}", json={"flow_id": flow["id"]}, headers=tenant.headers)
    assert bound.status_code == 200 and bound.json()["flow_id"] == flow["id"], bound.text
    other = new_tenant(client, container)
    foreign = drafted(client, other)
    client.post(f"/v1/flows/{foreign['id']}/publish", headers=other.headers)
    refused = client.patch(f"/v1/numbers/{number['id']}", json={"flow_id": foreign["id"]}, headers=tenant.headers)
    assert only_problem(refused)["type"] == "flow_not_found"


def test_a_number_may_be_registered_with_a_published_flow_already_bound(client, container, fake):
    e164 = f"+141555502{next(_numbers):02d}"
    tenant, _ = carrier_tenant(client, container, fake, [(e164, "Line")])
    flow = drafted(client, tenant)
    draft_only = client.post("/v1/numbers/byo", json={"e164": e164, "flow_id": flow["id"]}, headers=tenant.headers)
    assert only_problem(draft_only)["type"] == "flow_not_found"
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)
    created = client.post("/v1/numbers/byo", json={"e164": e164, "flow_id": flow["id"]}, headers=tenant.headers)
    assert created.status_code == 201 and created.json()["flow_id"] == flow["id"], created.text


# -- calls running a flow (issue 15 item 4, simulated) ------------------------------------------------


def call_with_flow(client, tenant: Account, flow_id: str, facts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = {"to": LONDON, "flow_id": flow_id, "consent_type": "prior_express", "mode": "simulated",
            "simulation": {"facts": facts, "at": "2026-12-01T10:00:00Z"}, **extra}
    created = client.post("/v1/calls", json=body, headers=tenant.headers)
    assert created.status_code == 201, created.text
    deadline = time.monotonic() + 10
    while True:
        record = client.get(f"/v1/calls/{created.json()['call_id']}", headers=tenant.headers).json()
        if record["status"] in ("completed", "failed"):
            return record
        assert time.monotonic() < deadline, record
        time.sleep(0.02)


def test_a_simulated_call_walks_the_published_flow_keypad_digits_reach_the_outcome_masked(client, tenant):
    flow = drafted(client, tenant)
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)

    record = call_with_flow(client, tenant, flow["id"], {"confirmed": True, "pin": "4821"})

    assert (record["status"], record["flow_id"], record["flow_version"]) == ("completed", flow["id"], 1), record
    assert record["outcome"] == {"confirmed": True, "pin": "4821"}
    assert "callee: [keypad: ****]" in record["transcript"] and "4821" not in record["transcript"]
    assert record["transcript"].startswith("agent: Hello from Acme Dental. Can you come tomorrow?")
    assert "agent: See you tomorrow." in record["transcript"]


def test_a_simulated_call_runs_a_flow_whose_keypad_block_beside_the_nodes_gives_the_defaults(client, tenant):
    """SPEC.md Flow, "Optional blocks beside nodes": ``keypad`` collects touch-tone digits. The block
    is the default of the keypad questions (a question's own key wins) and tells the agent digits
    may be collected: the published prompt says so (a flow without the block's does not), and a
    simulated call on the scripted agent still walks it end to end, the digits masked."""
    graph = copy.deepcopy(GRAPH)
    graph["nodes"][3]["keypad"] = {"terminators": ["*"]}  # its ending_mode and length from the flow's block
    graph["keypad"] = {"ending_mode": "fixed-length", "length": 4, "terminators": ["#"]}
    flow = drafted(client, tenant, graph)
    published = client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers).json()["published"]["compiled"]
    without = client.post(f"/v1/flows/{flow['id']}/preview", json={"graph_json": {
        k: v for k, v in graph.items() if k != "keypad"} | {"nodes": GRAPH["nodes"]}}, headers=tenant.headers).json()

    tools = {tool["name"]: tool for tool in published["tools"]}
    assert tools["collect_digits"]["fields"]["pin"] == {"ending_mode": "fixed-length", "terminators": ["*"],
                                                         "length": 4, "timeout_s": 5, "masked": True}
    assert "digits the caller enters on the phone keypad" in published["system_prompt"]
    assert "digits the caller enters on the phone keypad" not in without["compiled"]["system_prompt"]
    record = call_with_flow(client, tenant, flow["id"], {"confirmed": True, "pin": "4821"})
    assert (record["status"], record["outcome"]) == ("completed", {"confirmed": True, "pin": "4821"}), record
    assert "callee: [keypad: ****]" in record["transcript"] and "4821" not in record["transcript"]
    assert "agent: See you tomorrow." in record["transcript"]


def test_a_branch_takes_the_path_its_answer_selects(client, tenant):
    flow = drafted(client, tenant)
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)

    record = call_with_flow(client, tenant, flow["id"], {"confirmed": False, "pin": "4821"})

    assert record["status"] == "completed" and record["outcome"] == {"confirmed": False, "pin": None}, record
    assert "transfer you" in record["transcript"] and "enter your 4 digit code" not in record["transcript"]


def test_a_call_runs_the_version_published_when_it_starts(client, tenant):
    flow = drafted(client, tenant)
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)
    edited = copy.deepcopy(GRAPH)
    edited["nodes"][0]["text"] = "Hello from the new Acme Dental."
    client.patch(f"/v1/flows/{flow['id']}", json={"graph_json": edited}, headers=tenant.headers)

    first = call_with_flow(client, tenant, flow["id"], {"confirmed": True, "pin": "1234"})
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)
    second = call_with_flow(client, tenant, flow["id"], {"confirmed": True, "pin": "1234"})

    assert (first["flow_version"], "new Acme" in first["transcript"]) == (1, False)
    assert (second["flow_version"], "new Acme" in second["transcript"]) == (2, True)


def test_a_call_with_a_flow_takes_neither_objective_nor_schema_and_needs_a_published_flow(client, tenant):
    flow = drafted(client, tenant)
    body = {"to": LONDON, "flow_id": flow["id"], "consent_type": "prior_express", "mode": "simulated"}
    unpublished = only_problem(client.post("/v1/calls", json=body, headers=tenant.headers))
    assert (unpublished["loc"], unpublished["type"]) == (["body", "flow_id"], "flow_not_found")
    client.post(f"/v1/flows/{flow['id']}/publish", headers=tenant.headers)
    both = problems(client.post("/v1/calls", json={**body, "objective": "Mine", "outcome_schema": {
        "x": {"type": "string"}}}, headers=tenant.headers))
    assert sorted((tuple(p["loc"]), p["type"]) for p in both) == [
        (("body", "objective"), "flow_defines_outcome"), (("body", "outcome_schema"), "flow_defines_outcome")]
    silent = drafted(client, tenant, {"start": "bye", "nodes": [{"id": "bye", "type": "end", "text": "Bye."}]})
    client.post(f"/v1/flows/{silent['id']}/publish", headers=tenant.headers)
    assert only_problem(client.post("/v1/calls", json={**body, "flow_id": silent["id"]},
                                    headers=tenant.headers))["type"] == "flow_has_no_questions"
