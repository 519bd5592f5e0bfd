"""The dashboard's API keys, webhooks and carrier pages in headless Chromium against a real
``callwright serve`` (issue 21 items 4 and 5): a key created, rotated and revoked in the browser
with its secret shown once and the API agreeing at each step; the audit trail; a webhook endpoint
created (secret once, a refused URL shown by its field), its delivery listed and retried; the
carrier credentials verified and a caller number chosen, the auth token never in any page."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import PHONE, chromium, log_in, new_account, shot
from tests.e2e.service import ServeProcess, bearer, offline_server
from tests.fakes.receiver import Receiver
from tests.fakes.twilio import FakeTwilio
from tests.support.call_requests import call_body

pytestmark = pytest.mark.e2e
AT = "2026-12-01T10:00:00Z"  # inside call hours for the simulated call
COUNTDOWN = re.compile(r"\d+h \d\dm \d\ds left")


class World:
    def __init__(self, server: ServeProcess, fake: FakeTwilio, hook: Receiver, account: dict[str, Any],
                 page: Page) -> None:
        self.server, self.fake, self.hook, self.account, self.page = server, fake, hook, account, page
        self.secrets: dict[str, str] = {}

    def url(self, path: str) -> str:
        return f"{self.server.base_url}{path}"

    def api(self, method: str, path: str, secret: str, **options: Any) -> httpx.Response:
        with self.server.client() as http:
            return http.request(method, path, headers=bearer(secret), **options)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    fake = FakeTwilio().start()
    hook = Receiver()
    try:
        with offline_server("callwright-e2e-dash-keys-", rate_limit_tiers='{"standard": 1000000}',
                            webhook_allow_private="true", webhook_allow_http="true",
                            twilio_api_base_url=fake.base_url) as server, chromium() as browser:
            account = new_account(server, "keys")
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, server, account)
            yield World(server, fake, hook, account, page)
            page.close()
    finally:
        hook.close()
        fake.close()


def shots(page: Page, name: str) -> None:
    """The page at 1280 px and at 375 px (``<name>-375``), which must not scroll sideways."""
    shot(page, name)
    page.set_viewport_size(PHONE)
    try:
        shot(page, f"{name}-375")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def card(page: Page, text: str) -> Any:
    return page.locator("li.card", has_text=text)


def test_a_key_created_in_the_browser_is_shown_once_and_works(world: World) -> None:
    page = world.page
    page.goto(world.url("/app/keys"))
    expect(page.get_by_role("heading", name="API keys", level=1)).to_be_visible()
    page.get_by_label("Name (optional)").fill("CI deploy")
    page.get_by_role("button", name="Create key").click()
    secret = page.locator("#secret-created").input_value()
    assert secret.startswith("sk_live_"), secret
    expect(page.get_by_role("button", name="Copy")).to_be_visible()
    expect(page.get_by_text("Key CI deploy created.")).to_be_visible()
    shots(page, "key-created")
    assert world.api("GET", "/v1/calls", secret).status_code == 200

    page.goto(world.url("/app/keys"))
    assert secret not in page.content()
    row = card(page, secret[:16])
    expect(row).to_contain_text("CI deploy")
    expect(row).to_contain_text("active")
    expect(row).to_contain_text("All permissions")
    world.secrets["ci"] = secret

    # a key with only calls:read: the checkboxes are the API's scopes, and the API enforces them
    page.get_by_label("Name (optional)").fill("Read only")
    page.get_by_label("Only the scopes checked below").check()
    page.get_by_role("checkbox", name=re.compile(r"^calls:read")).check()
    page.get_by_role("button", name="Create key").click()
    reader = page.locator("#secret-created").input_value()
    assert world.api("GET", "/v1/calls", reader).status_code == 200
    assert world.api("POST", "/v1/webhooks", reader, json={"url": world.hook.url}).status_code == 403
    page.goto(world.url("/app/keys"))
    expect(card(page, reader[:16])).to_contain_text("calls:read")
    assert reader not in page.content()
    shots(page, "keys")


def test_rotating_shows_the_new_secret_once_and_both_work_during_the_grace(world: World) -> None:
    page, old = world.page, world.secrets["ci"]
    page.goto(world.url("/app/keys"))
    card(page, old[:16]).get_by_role("button", name="Rotate CI deploy").click()
    new = page.locator("#secret-rotated").input_value()
    assert new.startswith("sk_live_") and new != old
    countdown = page.locator(".notice span[data-until]")
    expect(countdown).to_have_text(COUNTDOWN)
    assert countdown.inner_text().startswith(("23h", "24h"))
    shots(page, "key-rotated")
    assert world.api("GET", "/v1/calls", old).status_code == 200  # the grace: audited as rotated_key_used
    assert world.api("GET", "/v1/calls", new).status_code == 200

    page.goto(world.url("/app/keys"))
    content = page.content()
    assert new not in content and old not in content
    expect(card(page, old[:16])).to_contain_text("rotated")
    expect(card(page, old[:16]).locator("span[data-until]")).to_have_text(COUNTDOWN)
    expect(card(page, new[:16])).to_contain_text("active")
    world.secrets["ci-new"] = new


def test_revoking_asks_first_then_the_api_refuses_the_key(world: World) -> None:
    page, new = world.page, world.secrets["ci-new"]
    page.goto(world.url("/app/keys"))
    row = card(page, new[:16])
    confirm = row.get_by_role("button", name="Yes, revoke CI deploy")
    expect(confirm).to_be_hidden()
    row.locator("summary", has_text="Revoke CI deploy").click()
    confirm.click()
    expect(page.get_by_text(re.compile(r"revoked: it no longer authenticates"))).to_be_visible()
    expect(card(page, new[:16]).locator(".badge")).to_have_text("revoked")
    expect(card(page, new[:16]).get_by_role("button")).to_have_count(0)
    assert world.api("GET", "/v1/calls", new).status_code == 401


def test_the_audit_events_show_the_keys_history(world: World) -> None:
    page = world.page
    page.goto(world.url("/app/keys"))
    page.get_by_role("link", name="Audit events").click()
    expect(page.get_by_role("heading", name="Audit events")).to_be_visible()
    table = page.locator("table.audit")
    for kind in ("api_key.issued", "api_key.rotated", "api_key.rotated_key_used", "api_key.revoked"):
        expect(table).to_contain_text(kind)
    shots(page, "keys-audit")
    page.get_by_label("Event type").select_option("api_key.revoked")
    page.get_by_role("button", name="Filter").click()
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table).to_contain_text("api_key.revoked")
    expect(table).not_to_contain_text("api_key.issued")


def wait_for(check: Any, what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_a_webhook_endpoint_created_in_the_browser_and_its_delivery_retried(world: World) -> None:
    page, hook = world.page, world.hook
    page.goto(world.url("/app/webhooks"))
    refused = "https://user:pw@127.0.0.1/hook"
    page.get_by_label("URL (https, reachable from the internet)").fill(refused)
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.locator("#url-error")).to_contain_text("credentials")
    expect(page.get_by_label("URL (https, reachable from the internet)")).to_have_value(refused)

    page.get_by_label("URL (https, reachable from the internet)").fill(hook.url)
    page.get_by_label("Description (optional)").fill("CRM sync")
    page.get_by_role("button", name="Add endpoint").click()
    secret = page.locator("#secret-webhook-created").input_value()
    assert secret.startswith("whsec_"), secret
    expect(card(page, hook.url)).to_contain_text("call.completed")
    shots(page, "webhooks")
    page.goto(world.url("/app/webhooks"))
    assert secret not in page.content()
    card(page, hook.url).get_by_role("button", name="Rotate secret").click()
    rotated = page.locator("#secret-webhook-rotated").input_value()
    assert rotated.startswith("whsec_") and rotated != secret
    expect(page.locator(".notice span[data-until]")).to_have_text(COUNTDOWN)

    body = {**call_body(), "simulation": {**call_body()["simulation"], "at": AT}}
    made = world.api("POST", "/v1/calls", world.account["secret"], json=body)
    assert made.status_code in (200, 201, 202), made.text
    call_id = made.json()["call_id"]
    wait_for(lambda: any(call_id.encode() in r.body for r in hook.received), "the webhook was not delivered")

    page.goto(world.url("/app/webhooks"))
    card(page, hook.url).get_by_role("link", name="Deliveries").click()
    delivery = page.locator("li.delivery", has_text=call_id)

    def delivered() -> bool:
        page.reload()
        return "delivered" in (delivery.locator(".badge").text_content() or "") if delivery.count() else False

    wait_for(delivered, "the delivery is not listed as delivered")
    expect(delivery.locator("table.attempts tbody tr")).to_have_count(1)
    expect(delivery.locator("table.attempts")).to_contain_text("HTTP 200")
    before = len(hook.received)
    delivery.get_by_role("button", name=re.compile(r"^Retry dlv_")).click()
    expect(page.get_by_text(re.compile(r"Retry requested: the delivery is sent again shortly"))).to_be_visible()
    wait_for(lambda: len(hook.received) > before, "the retry was not sent")

    def retried() -> bool:
        page.reload()
        return "manual retry" in (delivery.text_content() or "")

    wait_for(retried, "the manual attempt is not listed")
    expect(delivery.locator("table.attempts tbody tr")).to_have_count(2)
    shots(page, "webhook-deliveries")
    assert secret not in page.content() and rotated not in page.content()

    page.goto(world.url("/app/webhooks"))
    card(page, hook.url).get_by_role("button", name="Disable").click()
    expect(card(page, hook.url).locator(".badge")).to_have_text("disabled")
    assert world.api("GET", "/v1/webhooks", world.account["secret"]).json()["data"][0]["active"] is False
    card(page, hook.url).get_by_role("button", name="Enable").click()
    expect(card(page, hook.url).locator(".badge")).to_have_text("active")

    # a second endpoint, deleted after the confirmation step: listed as deleted, nothing to act on
    other = hook.url.replace("/hook", "/other")
    page.get_by_label("URL (https, reachable from the internet)").fill(other)
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.locator("#secret-webhook-created")).to_have_value(re.compile(r"^whsec_"))
    doomed = page.locator("li.card", has=page.get_by_role("link", name=other, exact=True))
    expect(doomed.get_by_role("button", name="Yes, delete this endpoint")).to_be_hidden()
    doomed.locator("summary", has_text="Delete").click()
    doomed.get_by_role("button", name="Yes, delete this endpoint").click()
    expect(page.get_by_text("Endpoint deleted; its delivery history stays readable.")).to_be_visible()
    expect(doomed.locator(".badge")).to_have_text("deleted")
    expect(doomed.get_by_role("button")).to_have_count(0)


def test_the_carrier_form_verifies_and_chooses_a_number_never_echoing_the_token(world: World) -> None:
    page = world.page
    account = world.fake.add_account(friendly_name="Acme Twilio",
                                     numbers=[("+14155550100", "Main line"), ("+14155550101", "Support line")])
    page.goto(world.url("/app/carrier"))
    expect(page.locator(".badge")).to_have_text("not configured")
    seen: list[str] = [page.content()]

    wrong = "wrongtoken" + account.auth_token[:6]
    page.get_by_label("Account SID").fill(account.sid)
    page.get_by_label("Auth token").fill(wrong)
    page.get_by_role("button", name="Verify credentials").click()
    expect(page.locator(".field-error")).to_contain_text("did not accept")
    expect(page.get_by_label("Account SID")).to_have_value(account.sid)
    expect(page.get_by_label("Auth token")).to_have_value("")
    seen.append(page.content())
    assert wrong not in seen[-1]
    shots(page, "carrier-refused")

    page.get_by_label("Auth token").fill(account.auth_token)
    page.get_by_role("button", name="Verify credentials").click()
    expect(page.get_by_text("Credentials verified for Acme Twilio.")).to_be_visible()
    expect(page.locator(".badge").first).to_have_text("verified")
    expect(page.get_by_text(f"ends in {account.auth_token[-4:]}")).to_be_visible()
    expect(page.get_by_label("Auth token")).to_have_value("")
    seen.append(page.content())

    page.get_by_role("radio", name=re.compile(r"\+14155550101")).check()
    page.get_by_role("button", name="Use this number").click()
    expect(page.get_by_text("Calls now come from +14155550101.")).to_be_visible()
    expect(page.get_by_role("radio", name=re.compile(r"\+14155550101"))).to_be_checked()
    expect(page.get_by_role("radio", name=re.compile(r"\+14155550101"))).to_have_accessible_name(
        re.compile("current caller number"))
    seen.append(page.content())
    shots(page, "carrier")
    page.goto(world.url("/app/carrier"))
    expect(page.locator(".badge").first).to_have_text("verified")
    seen.append(page.content())
    assert all(account.auth_token not in html for html in seen)
    stored = world.api("GET", "/v1/providers/carrier", world.account["secret"]).json()
    assert stored == {"status": "verified", "last4": account.auth_token[-4:]}
