"""The dashboard's calls pages (issue 21 item 2) in headless Chromium against a real ``callwright serve``:
the list and its filters (a refused filter explained next to its field, the form keeping its values),
live updates of the list (a call created while the page is open appears without a reload), the call
page (outcome by its schema, transcript, costs, timeline), a webhook delivery to a loopback receiver
with its failed attempts and a Retry that leads to a delivered attempt, and the 404 of an unknown or
another tenant's call. Calls are set up through the API with the account's key; what is under test
goes through the browser."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from entrypoints.http.dashboard import calls_live
from tests.e2e.browser import PHONE, log_in, new_account, shot
from tests.e2e.service import ServeProcess, bearer, offline_server
from tests.support.call_requests import LONDON, LONDON_2, call_body

pytestmark = pytest.mark.e2e

AT = "2026-12-01T10:00:00Z"  # inside London's call hours, whatever the hour the test runs
SCHEMA = {"confirmed": {"type": "boolean"}, "date": {"type": "string", "optional": True},
          "party_size": {"type": "integer", "optional": True}}


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-dash-calls-", rate_limit_tiers='{"standard": 1000000}',
                        webhook_allow_private="true", webhook_allow_http="true",
                        webhook_retry_delays="0.3,0.3,0.3") as started:
        yield started


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    try:
        yield opened
    finally:
        context.close()


def rest(server: ServeProcess, account: dict[str, Any], method: str, path: str, **options: Any) -> httpx.Response:
    with httpx.Client(base_url=server.base_url, headers=bearer(account["secret"]), timeout=30) as http:
        return http.request(method, path, **options)


def make_call(server: ServeProcess, account: dict[str, Any], *, facts: dict[str, Any] | None = None,
              answered_by: str | None = None, **overrides: Any) -> str:
    simulation: dict[str, Any] = {"facts": facts if facts is not None else {"confirmed": True}, "at": AT}
    if answered_by:
        simulation["answered_by"] = answered_by
    created = rest(server, account, "POST", "/v1/calls", json=call_body(simulation=simulation, **overrides))
    assert created.status_code == 201, created.text
    return str(created.json()["call_id"])


def finished(server: ServeProcess, account: dict[str, Any], call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        record = rest(server, account, "GET", f"/v1/calls/{call_id}").json()
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record  # type: ignore[no-any-return]
        time.sleep(0.1)


def listed_ids(page: Page) -> set[str]:
    return set(page.locator("#call-rows tr[data-call-id]").evaluate_all("rows => rows.map(r => r.dataset.callId)"))


WIDEST = """[...document.querySelectorAll('main *')].filter(e => !e.closest('.table-wrap'))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5)
  .map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


def no_page_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), f"the page scrolls sideways: {page.evaluate(WIDEST)}"


def test_the_list_shows_the_calls_and_each_filter_filters(server, page):
    account = new_account(server, "calls-list")
    first = make_call(server, account, to=LONDON)
    second = make_call(server, account, to=LONDON_2)
    machine = make_call(server, account, to=LONDON, answered_by="machine_end_beep")
    for call_id in (first, second, machine):
        finished(server, account, call_id)
    log_in(page, server, account)

    page.goto(f"{server.base_url}/app/calls")
    assert listed_ids(page) == {first, second, machine}
    expect(page.get_by_role("heading", name="3 calls")).to_be_visible()
    row = page.locator(f"tr[data-call-id='{machine}']")
    expect(row).to_contain_text("failed")
    expect(row).to_contain_text("Failed: machine_detected")
    expect(page.locator(f"tr[data-call-id='{first}']")).to_contain_text("Outcome captured")
    shot(page, "calls-list")

    page.get_by_label("Status").select_option("failed")
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url(re.compile(r".*status=failed.*"))
    assert listed_ids(page) == {machine}
    expect(page.get_by_label("Status")).to_have_value("failed")

    page.goto(f"{server.base_url}/app/calls")
    page.get_by_label("To number starts with").fill("+44207946")
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url(re.compile(r".*to_prefix=.*"))
    assert listed_ids(page) == {second}

    page.goto(f"{server.base_url}/app/calls")
    page.get_by_label("Outcome").select_option("true")
    page.get_by_text("More filters and sorting").click()
    page.get_by_label("Per page").fill("1")
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url(re.compile(r".*has_outcome=true.*"))
    shown = listed_ids(page)
    assert len(shown) == 1 and shown <= {first, second}
    page.get_by_role("link", name="Older calls").click()  # the cursor keeps the filters
    page.wait_for_url(re.compile(r".*cursor=.*"))
    assert "has_outcome=true" in page.url
    assert listed_ids(page) == {first, second} - shown
    expect(page.get_by_role("link", name="Older calls")).to_have_count(0)

    # A malformed date: the API's 422, in words next to the field, the form keeping what was typed.
    page.goto(f"{server.base_url}/app/calls?status=completed&start=yesterday")
    expect(page.get_by_role("alert")).to_contain_text("The filters were refused")
    expect(page.locator("#error-start")).to_contain_text("datetime")
    expect(page.get_by_label("Created from")).to_have_value("yesterday")
    expect(page.get_by_label("Status")).to_have_value("completed")
    expect(page.locator("#call-rows")).to_contain_text("No calls shown")
    shot(page, "calls-list-refused")

    page.set_viewport_size(PHONE)
    page.goto(f"{server.base_url}/app/calls")
    no_page_scroll(page)
    shot(page, "calls-list-375")


def test_a_call_made_while_the_list_is_open_appears_without_a_reload(server, page):
    account = new_account(server, "calls-live")
    earlier = make_call(server, account)
    finished(server, account, earlier)
    log_in(page, server, account)
    page.goto(f"{server.base_url}/app/calls?status=completed")
    assert listed_ids(page) == {earlier}
    page.evaluate("window.stillTheSamePage = true")
    page.wait_for_timeout(1500)  # the stream is connected and has seen the first page

    later = make_call(server, account, to=LONDON_2)
    failed = make_call(server, account, answered_by="machine_end_beep")  # filtered out: not completed
    expect(page.locator(f"tr[data-call-id='{later}']")).to_be_visible(timeout=15_000)
    expect(page.locator(f"tr[data-call-id='{later}']")).to_contain_text("completed")
    assert page.evaluate("window.stillTheSamePage") is True
    finished(server, account, failed)
    page.wait_for_timeout(2000)
    assert listed_ids(page) == {earlier, later}


def test_the_call_page_shows_outcome_transcript_costs_and_timeline(server, page, browser):
    account = new_account(server, "calls-page")
    call_id = make_call(server, account, outcome_schema=SCHEMA, facts={"confirmed": True, "party_size": 4})
    record = finished(server, account, call_id)
    assert record["status"] == "completed", record
    log_in(page, server, account)

    page.goto(f"{server.base_url}/app/calls")
    page.get_by_role("link", name=call_id).click()
    page.wait_for_url(f"**/app/calls/{call_id}")
    expect(page.get_by_role("heading", level=1)).to_contain_text(call_id)
    expect(page.get_by_role("heading", name="Status: completed")).to_be_visible()

    outcome = page.locator("table.outcome")
    expect(outcome.locator("tr", has_text="confirmed")).to_contain_text("boolean")
    expect(outcome.locator("tr", has_text="confirmed")).to_contain_text("true")
    expect(outcome.locator("tr", has_text="party_size")).to_contain_text("integer")
    expect(outcome.locator("tr", has_text="party_size")).to_contain_text("4")
    expect(outcome.locator("tr", has_text="date")).to_contain_text("not found")
    assert record["confidence"] is not None
    expect(page.locator("p.confidence")).to_contain_text(f"Confidence: {record['confidence']:.2f}")

    transcript = page.locator(".transcript")
    expect(transcript).to_contain_text("Could you tell me the party size?")
    expect(transcript.locator(".speaker").first).to_have_text("agent:")
    expect(transcript.locator("p")).to_have_text(record["transcript"].splitlines())  # as the API gave it

    costs = page.locator("dl.costs")
    for label, name in (("Voice", "cost_voice"), ("Extraction", "cost_extraction"), ("Total", "cost_total")):
        amount = costs.locator("dt", has_text=label).locator("xpath=following-sibling::dd[1]")
        expect(amount).to_have_text(f"${record[name]}")
    timeline = page.locator("ol.timeline")
    for step in ("queued", "started", "answered", "completed"):
        expect(timeline).to_contain_text(step)
    expect(page.locator("#call-body")).not_to_have_attribute("data-live", re.compile(".*"))
    gone = page.request.get(f"{server.base_url}/app/calls/{call_id}/live")
    assert gone.status == 204  # a final call's stream tells the browser not to reconnect
    shot(page, "call-page")

    page.set_viewport_size(PHONE)
    page.reload()
    no_page_scroll(page)
    shot(page, "call-page-375")


class Receiver:
    """A loopback webhook receiver: 500 until told to accept, then 200."""

    def __init__(self) -> None:
        self.accept = False
        self.hits: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = 200 if receiver.accept else 500
                receiver.hits.append(status)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"no")

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for_delivery(server: ServeProcess, account: dict[str, Any], endpoint_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 40
    while True:
        rows = rest(server, account, "GET", f"/v1/webhooks/{endpoint_id}/deliveries").json()["data"]
        if rows and rows[0]["status"] == status:
            return rows[0]  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, rows
        time.sleep(0.3)


def test_a_failed_delivery_is_listed_and_retry_delivers_it(server, page):
    account = new_account(server, "calls-hooks")
    receiver = Receiver()
    try:
        created = rest(server, account, "POST", "/v1/webhooks", json={"url": receiver.url, "events": ["call.completed"]})
        assert created.status_code == 201, created.text
        endpoint_id = created.json()["id"]
        call_id = make_call(server, account)
        finished(server, account, call_id)
        failed = wait_for_delivery(server, account, endpoint_id, "permanently_failed")
        assert failed["call_id"] == call_id and receiver.hits == [500] * 4
        log_in(page, server, account)

        page.goto(f"{server.base_url}/app/calls/{call_id}")
        delivery = page.locator(f"article.delivery[data-delivery-id='{failed['delivery_id']}']")
        expect(delivery.get_by_role("heading")).to_contain_text("permanently failed")
        expect(delivery.locator("tr.attempt")).to_have_count(4)
        expect(delivery.locator("tr.attempt").first).to_contain_text("500 failed")
        expect(delivery).to_contain_text(receiver.url)

        receiver.accept = True
        delivery.get_by_role("button", name="Retry delivery").click()
        expect(page.get_by_role("status")).to_contain_text("Retry of")
        delivery = page.locator(f"article.delivery[data-delivery-id='{failed['delivery_id']}']")
        expect(delivery.locator("tr.attempt")).to_have_count(5, timeout=15_000)
        expect(delivery.locator("tr.attempt").nth(4)).to_contain_text("200 delivered")
        expect(delivery.locator("tr.attempt").nth(4)).to_contain_text("manual")
        expect(delivery.get_by_role("heading")).to_contain_text("delivered")
        assert receiver.hits[-1] == 200
        shot(page, "call-deliveries")
        page.set_viewport_size(PHONE)
        page.reload()
        expect(page.locator("article.delivery tr.attempt")).to_have_count(5)
        no_page_scroll(page)
        shot(page, "call-deliveries-375")
    finally:
        receiver.close()


def test_an_unknown_or_another_tenants_call_is_a_404_page(server, page):
    account = new_account(server, "calls-404")
    other = new_account(server, "calls-other")
    theirs = make_call(server, other)
    log_in(page, server, account)
    for call_id in ("not-a-call-id", theirs, "cll_" + "0" * 32):
        answer = page.goto(f"{server.base_url}/app/calls/{call_id}")
        assert answer is not None and answer.status == 404
        expect(page.get_by_role("heading", level=1)).to_have_text("No such call (404)")
        expect(page.locator("main")).to_contain_text("There is no call with this id in your account")
    expect(page.locator("main")).to_contain_text("not_found")
    shot(page, "call-404")


def test_the_call_stream_says_changed_until_the_call_is_final_then_tells_the_browser_to_stop(monkeypatch):
    """The call page's stream, driven by a scripted probe (a simulated call ends within milliseconds,
    too fast for a browser to watch): one ``changed`` per change, then a day's ``retry`` and the end."""
    monkeypatch.setattr(calls_live, "POLL", 0)
    answers = iter([("a", False, False), ("a", False, False), ("b", False, False), ("c", True, False)])

    async def probe() -> tuple[str | None, bool, bool]:
        return next(answers)

    async def sent() -> list[str]:
        return [m.encode().decode() async for m in calls_live._changes(None, None, probe, "a")]  # type: ignore[arg-type]

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API keeps a loop running in this thread
        messages = thread.submit(lambda: asyncio.run(sent())).result()
    assert [m for m in messages if m.startswith("event: changed")] == [
        "event: changed\r\ndata: b\r\n\r\n", "event: changed\r\ndata: c\r\n\r\n"]
    assert messages[-1] == f": final\r\nretry: {calls_live.NEVER_MS}\r\n\r\n"
