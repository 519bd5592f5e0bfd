"""The dashboard's acceptance journey in one browser (issue 21): log in, place a call from the form
and watch it reach its outcome on the call page without a reload, once simulated and once live
through the fake carrier (which rings for seconds first, so the page is seen before the outcome)."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import chromium, log_in, new_account, shot
from tests.e2e.service import ServeProcess, base_env, bearer, free_port, start, use_carrier
from tests.fakes.twilio import FakeAccount, FakeTwilio, Say, Scenario

pytestmark = pytest.mark.e2e
CALLER = "+14155550100"
AT = "2026-12-01T10:00:00Z"  # inside London's call hours, whatever the hour the test runs
CALL_PAGE = re.compile(r"/app/calls/(cll_[A-Za-z0-9_-]+)\?placed=1$")


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[ServeProcess, FakeTwilio, FakeAccount]]:
    workdir = Path(tempfile.mkdtemp(prefix="callwright-dash-journey-"))
    fake = FakeTwilio().start()
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   rate_limit_tiers='{"standard": 1000000}')
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    try:
        yield server, fake, fake.add_account(numbers=[(CALLER, "Front desk")])
    finally:
        fake.close()
        server.cleanup()
        server.stop_postgres()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def page(world) -> Iterator[tuple[Page, dict[str, Any]]]:
    server, _fake, carrier_account = world
    account = new_account(server, "journey")
    use_carrier(server, bearer(account["secret"]), carrier_account, CALLER)
    with chromium() as browser:
        tab = browser.new_page()
        log_in(tab, server, account)
        yield tab, account


def fill_form(page: Page, server: ServeProcess, to: str) -> None:
    page.goto(f"{server.base_url}/app/new-call")
    page.get_by_label("Number to call").fill(to)
    page.get_by_label("Objective").fill("Confirm the appointment")
    rows = page.locator("#schema-rows [data-row]")
    rows.nth(0).get_by_label("Field name").fill("confirmed")
    rows.nth(0).get_by_label("Type").select_option("boolean")
    page.get_by_role("button", name="Add field").click()
    rows.nth(1).get_by_label("Field name").fill("slot")
    rows.nth(1).get_by_label("Type").select_option("enum")
    rows.nth(1).get_by_label("Enum values (comma-separated)").fill("morning, afternoon")
    page.get_by_label("Consent", exact=True).select_option("emergency")


def outcome_cell(page: Page, field: str) -> Any:
    return page.locator("table.outcome tr").filter(has_text=field)


def test_a_simulated_call_from_the_form_shows_its_outcome(world, page):
    server, _fake, _ = world
    tab, account = page
    fill_form(tab, server, "+442071838761")
    tab.get_by_role("radio", name=re.compile("^Simulated")).check()
    tab.get_by_label("Call takes place at").fill(AT)
    tab.get_by_label("Facts the simulated person knows").fill('confirmed: true\nslot: "morning"')
    tab.get_by_role("button", name="Place the call").click()
    tab.wait_for_url(CALL_PAGE)
    call_id = CALL_PAGE.search(tab.url).group(1)  # type: ignore[union-attr]
    expect(tab.locator("#call-body")).to_contain_text("completed", timeout=20_000)  # no reload: the page is live
    with httpx.Client(base_url=server.base_url, trust_env=False) as api:
        record = api.get(f"/v1/calls/{call_id}", headers=bearer(account["secret"])).json()
    assert record["status"] == "completed" and record["outcome"], record
    for field, value in record["outcome"].items():  # the page shows the API's outcome, field by field
        shown = "true" if value is True else "false" if value is False else "not found" if value is None else str(value)
        expect(outcome_cell(tab, field)).to_contain_text(shown)
    shot(tab, "journey-simulated-outcome")
    tab.goto(f"{server.base_url}/app/new-call")  # the placed call's draft is gone: a fresh form
    expect(tab.get_by_label("Objective")).to_have_value("")
    expect(tab.get_by_label("Number to call")).to_have_value("")


def test_a_live_call_from_the_form_reaches_its_outcome_on_the_open_page(world, page):
    server, fake, _ = world
    tab, _account = page
    to = "+442071838762"
    fake.script(to, Scenario(turns=[Say("Yes, it is confirmed."), Say("The afternoon, please.")], ring_seconds=3.0))
    fill_form(tab, server, to)
    tab.get_by_role("radio", name=re.compile("^Live")).check()
    tab.get_by_text("More options").click()
    tab.get_by_label("Voice engine").select_option("alpha_25")
    tab.get_by_role("button", name="Place the call").click()
    tab.wait_for_url(CALL_PAGE)
    expect(tab.get_by_text("The outcome appears here when the call ends.")).to_be_visible()
    shot(tab, "journey-live-ringing")
    tab.evaluate("window.stillTheSamePage = true")
    expect(outcome_cell(tab, "slot")).to_contain_text("afternoon", timeout=30_000)
    expect(outcome_cell(tab, "confirmed")).to_contain_text(re.compile("true|yes", re.I))
    assert tab.evaluate("window.stillTheSamePage") is True  # updated in place, never reloaded
    expect(tab.locator("#call-body")).to_contain_text("completed")
    shot(tab, "journey-live-outcome")
