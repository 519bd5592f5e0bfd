"""The dashboard's new-call and batch pages (issue 21 item 3) in headless Chromium against a real
``callwright serve``: a simulated test call made with the outcome-schema builder is the API's call
with exactly that objective and schema; a refused form keeps everything typed and shows the API's
problems beside their fields; one rendered form sent twice makes one call; a pasted list of numbers
shows the 207's per-item results."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import PHONE, log_in, new_account, shot
from tests.e2e.service import ServeProcess, bearer, offline_server
from tests.support.call_requests import LONDON, LONDON_2, LONDON_3

pytestmark = pytest.mark.e2e

AT = "2026-12-01T10:00:00Z"  # inside London's call hours, whatever the hour the test runs
OBJECTIVE = "Confirm Tuesday's dental appointment and ask which slot suits"
SCHEMA = {
    "confirmed": {"type": "boolean", "optional": False, "description": "Whether they confirmed"},
    "slot": {"type": "enum", "optional": True, "values": ["morning", "afternoon"]},
}
CALL_PAGE = re.compile(r".*/app/calls/(cll_[A-Za-z0-9_]+)\?placed=1$")


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-dash-new-call-", rate_limit_tiers='{"standard": 1000000}') as started:
        yield started


@pytest.fixture(scope="module")
def account(server: ServeProcess) -> dict[str, Any]:
    return new_account(server, "new-call")


@pytest.fixture
def page(browser: Browser, server: ServeProcess, account: dict[str, Any]) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    log_in(opened, server, account)
    yield opened
    context.close()


def api(server: ServeProcess, account: dict[str, Any], path: str, **params: Any) -> Any:
    with httpx.Client(base_url=server.base_url, transport=httpx.HTTPTransport()) as http:
        response = http.get(path, headers=bearer(account["secret"]), params=params)
    assert response.status_code == 200, response.text
    return response.json()


def call_count(server: ServeProcess, account: dict[str, Any]) -> int:
    return int(api(server, account, "/v1/calls", limit=1)["total"])


def ended(server: ServeProcess, account: dict[str, Any], call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        record = api(server, account, f"/v1/calls/{call_id}")
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record  # type: ignore[no-any-return]
        time.sleep(0.2)


def rows(page: Page) -> Any:
    return page.locator("#schema-rows [data-row]")


def fill_schema(page: Page, second_name: str = "slot") -> None:
    """Two fields with the builder: the first row is there, the second is added; the second is optional."""
    first = rows(page).nth(0)
    first.get_by_label("Field name").fill("confirmed")
    first.get_by_label("Type").select_option("boolean")
    first.get_by_label("Description").fill("Whether they confirmed")
    page.get_by_role("button", name="Add field").click()
    expect(rows(page)).to_have_count(2)
    second = rows(page).nth(1)
    second.get_by_label("Field name").fill(second_name)
    second.get_by_label("Type").select_option("enum")
    second.get_by_label("Optional").check()
    second.get_by_label("Enum values (comma-separated)").fill("morning, afternoon")


def fill_simulation(page: Page) -> None:
    page.get_by_label("Consent", exact=True).select_option("existing_business_relationship")
    page.get_by_role("radio", name=re.compile("^Simulated")).check()
    page.get_by_label("Call takes place at").fill(AT)
    page.get_by_label("Facts the simulated person knows").fill('confirmed: true\nslot: "morning"')


def fill_call(page: Page, server: ServeProcess, *, to: str = LONDON, second_name: str = "slot") -> None:
    page.goto(f"{server.base_url}/app/new-call")
    page.get_by_label("Number to call").fill(to)
    page.get_by_label("Objective").fill(OBJECTIVE)
    fill_schema(page, second_name)
    fill_simulation(page)


def no_page_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_the_form_makes_a_simulated_call_with_that_objective_and_schema(page, server, account):
    fill_call(page, server)
    shot(page, "new-call")
    page.set_viewport_size(PHONE)
    assert no_page_scroll(page)
    shot(page, "new-call-375")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_role("button", name="Place the call").click()
    page.wait_for_url(CALL_PAGE)
    call_id = CALL_PAGE.match(page.url).group(1)  # type: ignore[union-attr]
    record = api(server, account, f"/v1/calls/{call_id}")
    assert record["objective"] == OBJECTIVE
    assert record["outcome_schema"] == SCHEMA
    assert (record["to"], record["mode"]) == (LONDON, "simulated")
    assert record["consent_type"] == "existing_business_relationship"
    finished = ended(server, account, call_id)
    assert finished["status"] == "completed", finished
    assert finished["outcome"] == {"confirmed": True, "slot": "morning"}  # the facts typed on the form


def kept_as_typed(page: Page, *, to: str, second_name: str) -> None:
    expect(page.get_by_label("Number to call")).to_have_value(to)
    expect(page.get_by_label("Objective")).to_have_value(OBJECTIVE)
    expect(rows(page)).to_have_count(2)
    first, second = rows(page).nth(0), rows(page).nth(1)
    expect(first.get_by_label("Field name")).to_have_value("confirmed")
    expect(first.get_by_label("Type")).to_have_value("boolean")
    expect(first.get_by_label("Description")).to_have_value("Whether they confirmed")
    expect(first.get_by_label("Optional")).not_to_be_checked()
    expect(second.get_by_label("Field name")).to_have_value(second_name)
    expect(second.get_by_label("Type")).to_have_value("enum")
    expect(second.get_by_label("Optional")).to_be_checked()
    expect(second.get_by_label("Enum values (comma-separated)")).to_have_value("morning, afternoon")
    expect(page.get_by_label("Consent", exact=True)).to_have_value("existing_business_relationship")
    expect(page.get_by_role("radio", name=re.compile("^Simulated"))).to_be_checked()
    expect(page.get_by_label("Call takes place at")).to_have_value(AT)
    expect(page.get_by_label("Facts the simulated person knows")).to_have_value('confirmed: true\nslot: "morning"')
    expect(page.get_by_label("Metadata")).to_be_visible()  # "More options" opens when it holds something
    expect(page.get_by_label("Metadata")).to_have_value("crm_id: 42")


def test_a_refused_form_shows_the_problems_beside_their_fields_and_keeps_everything(page, server, account):
    before = call_count(server, account)
    fill_call(page, server, to="12345", second_name="Best Slot")
    page.get_by_text("More options").click()
    page.get_by_label("Metadata").fill("crm_id: 42")
    page.get_by_role("button", name="Place the call").click()
    page.wait_for_load_state()

    assert page.url.endswith("/app/new-call")
    expect(page.get_by_role("alert").first).to_contain_text("not placed")
    problem = rows(page).nth(1).locator(".field-error")
    expect(problem).to_contain_text("Best Slot")
    expect(problem).to_contain_text("field names must match")
    expect(rows(page).nth(0).locator(".field-error")).to_have_count(0)
    kept_as_typed(page, to="12345", second_name="Best Slot")
    shot(page, "new-call-refused")

    # the name corrected, the API's next refusal is the number's, beside the number
    rows(page).nth(1).get_by_label("Field name").fill("slot")
    page.get_by_role("button", name="Place the call").click()
    expect(page.locator("#to-error")).to_contain_text("must be an E.164 number")
    expect(page.get_by_label("Number to call")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#schema-rows .field-error")).to_have_count(0)
    kept_as_typed(page, to="12345", second_name="slot")
    assert call_count(server, account) == before

    # corrected, the same form goes through
    page.get_by_label("Number to call").fill(LONDON_2)
    page.get_by_role("button", name="Place the call").click()
    page.wait_for_url(CALL_PAGE)
    record = api(server, account, f"/v1/calls/{CALL_PAGE.match(page.url).group(1)}")  # type: ignore[union-attr]
    assert record["outcome_schema"] == SCHEMA and record["metadata"] == {"crm_id": 42}


def test_a_draft_keeps_the_schema_rows_across_a_reload(page, server):
    fill_call(page, server)
    page.reload()  # as after logging in again: app.js refills the form from its draft
    expect(rows(page)).to_have_count(2)
    expect(rows(page).nth(0).get_by_label("Field name")).to_have_value("confirmed")
    expect(rows(page).nth(0).get_by_label("Optional")).not_to_be_checked()
    expect(rows(page).nth(1).get_by_label("Field name")).to_have_value("slot")
    expect(rows(page).nth(1).get_by_label("Type")).to_have_value("enum")
    expect(rows(page).nth(1).get_by_label("Optional")).to_be_checked()
    expect(page.get_by_label("Call takes place at")).to_have_value(AT)
    rows(page).nth(0).get_by_role("button", name="Remove").click()
    page.reload()
    expect(rows(page)).to_have_count(1)
    expect(rows(page).nth(0).get_by_label("Field name")).to_have_value("slot")
    expect(rows(page).nth(0).get_by_label("Optional")).to_be_checked()


def test_the_same_rendered_form_sent_twice_makes_one_call(page, server, account):
    fill_call(page, server, to=LONDON_3)
    before = call_count(server, account)
    landed = page.evaluate("""async () => {
        const form = document.querySelector("form[data-draft=new-call]");
        const urls = [];
        for (let i = 0; i < 2; i++) {
            urls.push((await fetch(form.action, {method: "POST", body: new FormData(form)})).url);
        }
        return urls;
    }""")
    page.get_by_role("button", name="Place the call").click()  # and a third time, by the button
    page.wait_for_url(CALL_PAGE)
    assert landed[0] == landed[1] == page.url
    assert call_count(server, account) == before + 1


def test_a_pasted_list_shows_each_numbers_result(page, server, account):
    page.goto(f"{server.base_url}/app/batch")
    page.get_by_role("button", name="Create the calls").click()  # nothing pasted: said in words
    expect(page.locator("#numbers-error")).to_contain_text("Paste at least one phone number")
    expect(page.locator("#schema-rows .field-error")).to_have_count(0)  # an untouched row is no problem
    page.get_by_label("Numbers").fill("\n".join(f"+4420718{n:05d}" for n in range(201)))
    page.get_by_role("button", name="Create the calls").click()
    expect(page.locator("#numbers-error")).to_contain_text("That is 201 numbers; a batch takes at most 200")

    page.goto(f"{server.base_url}/app/batch")

    page.get_by_label("Numbers").fill(f"to,customer\n{LONDON},Ann\n{LONDON_2},Bob\n+99912345,Eve\n{LONDON_3},Dan\n")
    page.get_by_label("Objective (shared by every call)").fill(OBJECTIVE)
    fill_schema(page)
    fill_simulation(page)
    shot(page, "batch")
    before = call_count(server, account)
    page.get_by_role("button", name="Create the calls").click()

    expect(page.get_by_role("status")).to_contain_text("3 created, 1 refused")
    table = page.locator("table.nc-results tbody tr")
    expect(table).to_have_count(4)
    refused = table.nth(2)
    expect(refused).to_contain_text("+99912345")
    expect(refused).to_contain_text("Refused")
    expect(refused).to_contain_text("not a phone number")
    expect(refused.locator("td").first).to_have_text("4")  # the line of the paste (after the header)
    links = page.locator("table.nc-results a[href^='/app/calls/cll_']")
    expect(links).to_have_count(3)
    shot(page, "batch-results")
    page.set_viewport_size(PHONE)
    assert no_page_scroll(page)
    shot(page, "batch-results-375")
    page.set_viewport_size({"width": 1280, "height": 900})

    assert call_count(server, account) == before + 3
    for index, to in ((0, LONDON), (1, LONDON_2), (2, LONDON_3)):
        call_id = links.nth(index).inner_text()
        record = api(server, account, f"/v1/calls/{call_id}")
        assert (record["to"], record["objective"], record["outcome_schema"]) == (to, OBJECTIVE, SCHEMA)
    assert api(server, account, f"/v1/calls/{links.nth(1).inner_text()}")["metadata"] == {"customer": "Bob"}


def test_an_account_pending_review_is_told_in_words(browser, server):
    pending = new_account(server, "new-call-pending", approve=False)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        log_in(page, server, pending)
        fill_call(page, server)
        page.get_by_role("button", name="Place the call").click()
        expect(page.locator("main .notice.bad")).to_contain_text("pending review")
        expect(page.get_by_label("Objective")).to_have_value(OBJECTIVE)
        expect(rows(page)).to_have_count(2)
    finally:
        context.close()
