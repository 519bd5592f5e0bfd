"""The dashboard's configuration pages in headless Chromium (issue 21 item 5): a number's settings
(greeting, opening hours, a refused field, the SMS template preview), templates, and flows (the
graph drawn, preview errors on their nodes, publish). Set-up goes through the API with the
account's key; what is tested goes through the browser, and the API confirms what was saved."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.datastructures import FormMultiDict
from playwright.sync_api import Browser, Page, expect

from entrypoints.http.dashboard import numbers_form

from tests.e2e.browser import PHONE, SCREENSHOTS, log_in, new_account, shot
from tests.e2e.service import ServeProcess, base_env, bearer, free_port, start, use_carrier
from tests.fakes.twilio import FakeTwilio

pytestmark = pytest.mark.e2e
LINE = "+14155550170"
GOOD_GRAPH = {"start": "hello", "nodes": [
    {"id": "hello", "type": "message", "text": "Hi from Acme."},
    {"id": "when", "type": "question", "text": "Which day suits?", "field": "day", "field_type": "string"},
    {"id": "done", "type": "end", "text": "Thanks, bye."}],
    "edges": [{"from": "hello", "to": "when"}, {"from": "when", "to": "done"}]}


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[ServeProcess, dict[str, Any], str]]:
    workdir = Path(tempfile.mkdtemp(prefix="callwright-e2e-config-"))
    fake = FakeTwilio().start()
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   rate_limit_tiers='{"standard": 1000000}')
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    try:
        account = new_account(server, "config")
        headers = bearer(account["secret"])
        use_carrier(server, headers, fake.add_account(numbers=[(LINE, "Acme line")]), LINE)
        with server.client() as http:
            registered = http.post("/v1/numbers/byo", headers=headers, json={"e164": LINE})
            assert registered.status_code == 201, registered.text
        yield server, account, registered.json()["id"]
    finally:
        server.cleanup()
        fake.close()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def page(browser: Browser, setup: tuple[ServeProcess, dict[str, Any], str]) -> Iterator[Page]:
    server, account, _ = setup
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    log_in(opened, server, account)
    yield opened
    context.close()


def api_get(setup: tuple[ServeProcess, dict[str, Any], str], path: str) -> dict[str, Any]:
    server, account, _ = setup
    with httpx.Client(base_url=server.base_url, timeout=10, trust_env=False) as http:
        answer = http.get(path, headers=bearer(account["secret"]))
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def no_page_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_configure_greeting_and_hours(page: Page, setup: Any) -> None:
    server, _, number_id = setup
    page.goto(f"{server.base_url}/app/numbers")
    expect(page.get_by_role("link", name=LINE)).to_be_visible()
    shot(page, "numbers")
    page.get_by_role("link", name=LINE).click()
    expect(page.get_by_role("heading", name=f"Number {LINE}")).to_be_visible()
    page.get_by_label("Greeting (said first on every call)").fill("Thanks for calling Acme Plumbing.")
    page.get_by_label("Time zone").fill("America/New_York")
    page.get_by_label("Open on the hours below").check()
    page.get_by_label("Monday opens").fill("09:00")
    page.get_by_label("Monday closes").fill("17:00")
    page.get_by_label("Tuesday opens").fill("10:00")
    page.get_by_label("Tuesday closes").fill("16:30")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    number = api_get(setup, f"/v1/numbers/{number_id}")
    assert number["greeting"] == "Thanks for calling Acme Plumbing."
    assert number["timezone"] == "America/New_York"
    assert number["hours_json"] == {"mon": [["09:00", "17:00"]], "tue": [["10:00", "16:30"]]}
    assert number["sms_templates"] == [] and number["overflow_action"] == "voicemail"  # untouched fields stay
    # The saved values are shown again: Monday open, Wednesday closed.
    expect(page.get_by_label("Monday opens")).to_have_value("09:00")
    expect(page.locator('input[name="hours_wed_closed"]')).to_be_checked()
    shot(page, "number-edit")
    page.set_viewport_size(PHONE)
    shot(page, "number-edit-375")
    page.locator("fieldset.hours").screenshot(path=str(SCREENSHOTS / "number-hours-375.png"))
    assert no_page_scroll(page)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_refused_field_shows_its_message_and_keeps_values(page: Page, setup: Any) -> None:
    server, _, number_id = setup
    page.goto(f"{server.base_url}/app/numbers/{number_id}")
    page.get_by_label("Greeting (said first on every call)").fill("A greeting that must not be lost")
    page.get_by_label("Time zone").fill("Mars/Olympus_Mons")
    page.get_by_label("Wednesday opens").fill("08:00")
    page.get_by_label("Wednesday closes").fill("25:00")
    page.locator('input[name="hours_wed_closed"]').uncheck()
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#error-timezone")).to_be_visible()
    expect(page.locator("#error-timezone")).not_to_be_empty()
    expect(page.get_by_role("alert")).to_contain_text("Nothing was saved")
    expect(page.get_by_label("Greeting (said first on every call)")).to_have_value("A greeting that must not be lost")
    expect(page.get_by_label("Time zone")).to_have_value("Mars/Olympus_Mons")
    expect(page.get_by_label("Wednesday opens")).to_have_value("08:00")
    expect(page.get_by_label("Wednesday closes")).to_have_value("25:00")
    expect(page.locator('[id="error-hours_json.wed"]')).not_to_be_empty()
    shot(page, "number-refused")
    number = api_get(setup, f"/v1/numbers/{number_id}")
    assert number["greeting"] == "Thanks for calling Acme Plumbing." and number["timezone"] == "America/New_York"
    assert "wed" not in number["hours_json"]


def test_only_changed_fields_are_sent_and_a_cleared_one_as_null() -> None:
    number = {"e164": LINE, "objective": "Help", "greeting": "Hello", "persona": None, "outcome_schema": {},
              "recording_enabled": True, "language": "en-US", "timezone": "America/New_York",
              "hours_json": {"mon": [["09:00", "17:00"]]}, "overflow_action": "voicemail", "voicemail_mode": "off",
              "voicemail_schema": {}, "sms_enabled": False, "transfer_max_attempts": 3, "transfer_destinations": [],
              "routes": [], "sms_templates": []}
    state = numbers_form.state_from_number(number)
    fields = [("original", numbers_form.original(number)), ("hours_mode", "set"), ("recording_enabled", "on")]
    fields += [(name, state[name]) for name in (*numbers_form.PLAIN_TEXT, *numbers_form.NULLABLE_TEXT,
                                                *numbers_form.JSON_FIELDS, "transfer_max_attempts")]
    fields += [("hours_mon_open", "09:00"), ("hours_mon_close", "17:00")]
    untouched = FormMultiDict(fields)
    assert numbers_form.changes(untouched)[1] == {}
    edited = FormMultiDict([(k, "" if k == "greeting" else v) for k, v in fields]
                           + [("hours_tue_open", "10:00"), ("hours_tue_close", "12:00")])
    assert numbers_form.changes(edited)[1] == {
        "greeting": None, "hours_json": {"mon": [["09:00", "17:00"]], "tue": [["10:00", "12:00"]]}}


def test_a_cleared_greeting_is_removed(page: Page, setup: Any) -> None:
    server, _, number_id = setup
    page.goto(f"{server.base_url}/app/numbers/{number_id}")
    page.get_by_label("Greeting (said first on every call)").fill("")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    number = api_get(setup, f"/v1/numbers/{number_id}")
    assert number["greeting"] is None and number["timezone"] == "America/New_York"
    assert number["hours_json"] == {"mon": [["09:00", "17:00"]], "tue": [["10:00", "16:30"]]}


def test_transfer_destination_and_keypad_route(page: Page, setup: Any) -> None:
    server, _, number_id = setup
    page.goto(f"{server.base_url}/app/numbers/{number_id}")
    page.get_by_role("button", name="Add a destination").click()
    page.locator('input[name="dest_label"]').last.fill("Front desk")
    page.locator('input[name="dest_e164"]').last.fill("+14155550181")
    page.get_by_role("button", name="Add a route").click()
    route = page.locator(".route-row").last
    route.get_by_label("When").select_option("keypad")
    route.get_by_label("Key or prefix").fill("2")
    route.get_by_label("Then").select_option("transfer")
    route.get_by_label("Destination label (transfer)").fill("Front desk")
    page.locator('select[name="overflow_action"]').select_option("transfer")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    number = api_get(setup, f"/v1/numbers/{number_id}")
    assert number["transfer_destinations"] == [{"label": "Front desk", "e164": "+14155550181"}]
    assert number["routes"] == [{"match": {"keypad": "2"}, "action": "transfer", "destination": "Front desk"}]
    assert number["overflow_action"] == "transfer"
    expect(page.locator('input[name="dest_label"]')).to_have_value("Front desk")
    shot(page, "number-transfers")


def test_sms_preview_renders_and_shows_problems_without_saving(page: Page, setup: Any) -> None:
    server, _, number_id = setup
    page.goto(f"{server.base_url}/app/numbers/{number_id}")
    page.get_by_role("button", name="Add a text").click()
    row = page.locator(".sms-row").last
    row.get_by_label("Name").fill("Thanks")
    row.get_by_label("Text").fill("Hi {{ outcome.caller_name }}, thanks for calling {{ number.e164 }}.")
    row.get_by_role("button", name="Preview text").click()
    expect(row.locator(".sms-preview")).to_contain_text(f"Hi caller name, thanks for calling {LINE}.")
    expect(row.locator(".sms-preview")).to_contain_text("Not saved yet")
    assert api_get(setup, f"/v1/numbers/{number_id}")["sms_templates"] == []
    # Saved, the preview is the API's own.
    page.get_by_label("Send the texts below").check()
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    saved = api_get(setup, f"/v1/numbers/{number_id}")["sms_templates"]
    assert [t["body"] for t in saved] == ["Hi {{ outcome.caller_name }}, thanks for calling {{ number.e164 }}."]
    row = page.locator(".sms-row").first
    row.get_by_role("button", name="Preview text").click()
    expect(row.locator(".sms-preview")).to_contain_text("Saved template")
    expect(row.locator(".sms-preview")).to_contain_text(f"Hi caller name, thanks for calling {LINE}.")
    # Broken: an unknown outcome field; its problem is shown, nothing saved.
    row.get_by_label("Text").fill("Hi {{ outcome.shoe_size }}!")
    row.get_by_role("button", name="Preview text").click()
    expect(row.locator(".sms-preview")).to_contain_text("would be refused")
    expect(row.locator(".sms-preview")).to_contain_text("shoe_size")
    shot(page, "sms-preview")
    assert api_get(setup, f"/v1/numbers/{number_id}")["sms_templates"] == saved


def test_template_created_in_the_browser_is_listed(page: Page, setup: Any) -> None:
    server = setup[0]
    page.goto(f"{server.base_url}/app/templates")
    for name in ("Appointment reminder", "Short survey"):
        page.get_by_label("Name", exact=True).fill(name)
        page.get_by_label("Objective").fill(f"{name}: confirm tomorrow's appointment")
        page.get_by_role("button", name="Create template").click()
        expect(page.get_by_role("status")).to_contain_text("Template created.")
        expect(page.get_by_role("link", name=name)).to_be_visible()
    # A refusal keeps the form: bad JSON in the schema.
    page.get_by_label("Name", exact=True).fill("Broken")
    page.get_by_label("Objective").fill("Never saved")
    page.get_by_label("Outcome schema (JSON)").fill("{not json")
    page.get_by_role("button", name="Create template").click()
    expect(page.locator(".field-error")).to_contain_text("not valid JSON")
    expect(page.get_by_label("Name", exact=True)).to_have_value("Broken")
    page.get_by_role("link", name="Short survey").click()
    expect(page.get_by_role("heading", name="Short survey")).to_be_visible()
    expect(page.locator("dl.facts")).to_contain_text("Short survey: confirm tomorrow's appointment")
    shot(page, "template")
    page.get_by_role("button", name="Delete template").click()
    expect(page.get_by_role("status")).to_contain_text("Template deleted.")
    expect(page.get_by_role("link", name="Short survey")).to_have_count(0)
    expect(page.get_by_role("link", name="Appointment reminder")).to_be_visible()
    names = [t["name"] for t in api_get(setup, "/v1/templates")["data"]]
    assert names == ["Appointment reminder"]
    shot(page, "templates")


def test_flow_drawn_previewed_and_published(page: Page, setup: Any) -> None:
    server = setup[0]
    page.goto(f"{server.base_url}/app/flows")
    page.get_by_label("Name", exact=True).fill("Booking")
    page.get_by_label(re.compile("^Graph")).fill(json.dumps(GOOD_GRAPH, indent=2))
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_role("heading", name="Booking")).to_be_visible()
    flow_id = page.url.rsplit("/", 1)[-1].split("?")[0]
    svg = page.locator("svg.graph")
    for node in GOOD_GRAPH["nodes"]:
        expect(svg.locator(f'g[data-node-id="{node["id"]}"]')).to_contain_text(node["id"])
        expect(svg.locator(f'g[data-node-id="{node["id"]}"]')).to_contain_text(node["text"])
    expect(svg.locator("path.graph-edge")).to_have_count(2)
    expect(svg.locator(".graph-error")).to_have_count(0)
    shot(page, "flow-graph")
    # A broken graph (a node nothing leads to, with no way on): the preview marks it, saves nothing.
    broken = {**GOOD_GRAPH, "nodes": [*GOOD_GRAPH["nodes"], {"id": "stray", "type": "message", "text": "Lost."}]}
    page.get_by_label(re.compile("^Graph")).fill(json.dumps(broken, indent=2))
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_role("alert")).to_contain_text("does not compile")
    stray = page.locator('svg.graph g[data-node-id="stray"]')
    expect(stray.locator("rect.graph-error")).to_have_count(1)
    expect(stray.locator("text.graph-error-text").first).not_to_be_empty()
    expect(page.locator('svg.graph g[data-node-id="hello"] rect.graph-error')).to_have_count(0)
    expect(page.locator(".graph-problems")).to_contain_text("Node stray")
    expect(page.get_by_label(re.compile("^Graph"))).to_have_value(json.dumps(broken, indent=2))
    shot(page, "flow-errors")
    assert api_get(setup, f"/v1/flows/{flow_id}")["graph_json"] == GOOD_GRAPH
    # Saved broken, the publish is refused and the node marked; saved good again, it publishes.
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_role("status")).to_contain_text("Draft saved.")
    page.get_by_role("button", name="Publish the saved draft").click()
    expect(page.get_by_role("alert")).to_contain_text("Not published")
    expect(page.locator('svg.graph g[data-node-id="stray"] rect.graph-error')).to_have_count(1)
    assert api_get(setup, f"/v1/flows/{flow_id}")["state"] == "draft"
    page.get_by_label(re.compile("^Graph")).fill(json.dumps(GOOD_GRAPH, indent=2))
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_role("status")).to_contain_text("Draft saved.")
    page.get_by_role("button", name="Publish the saved draft").click()
    expect(page.get_by_role("status")).to_contain_text("Published")
    expect(page.locator("dl.facts").first).to_contain_text("published")
    expect(page.get_by_role("heading", name="Published version 1")).to_be_visible()
    shot(page, "flow-published")
    flow = api_get(setup, f"/v1/flows/{flow_id}")
    assert flow["state"] == "published" and flow["published_version"] == 1 and flow["draft_version"] == 3
    assert flow["graph_json"] == GOOD_GRAPH
    page.goto(f"{server.base_url}/app/flows")
    expect(page.get_by_role("row", name=re.compile("Booking"))).to_contain_text("published")
    shot(page, "flows")
    # The starting graph the form offers (a branch with a condition) is drawn too, edge conditions beside.
    page.get_by_label("Name", exact=True).fill("Dental")
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_role("heading", name="Dental")).to_be_visible()
    expect(page.locator("svg.graph .graph-node-group")).to_have_count(5)
    expect(page.locator("svg.graph text.graph-when")).to_have_text(["confirmed eq false"])
    shot(page, "flow-graph-branch")
    page.set_viewport_size(PHONE)
    shot(page, "flow-graph-375")
    assert no_page_scroll(page)
    page.set_viewport_size({"width": 1280, "height": 900})
