"""The dashboard's sessions in a real browser (issue 21 items 1 and 7, and its security points):
sign up with the key shown once and the pending-review state explained; log in and out; the
password reset from the e-mailed link; an ended session sends the page to the login form and back;
the cookie's flags; a change without the CSRF token changes nothing; a logged-out token opens
nothing; ``/v1`` keeps refusing session tokens; no page but the one-time display carries a key."""

from __future__ import annotations

import email
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from adapters.crypto.master_key import derive
from adapters.crypto.sessions import JwtSessionTokens
from entrypoints.http.dashboard.render import NAV
from tests.e2e.browser import PHONE, accessibility_problems, log_in, new_account, shot
from tests.e2e.service import ServeProcess, bearer, offline_server

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-dashboard-auth-", rate_limit_tiers='{"standard": 1000000}',
                        login_attempts="1000") as started:
        yield started


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


def master_secret(server: ServeProcess) -> bytes:
    assert server.data_dir is not None
    return (server.data_dir / "secret.key").read_bytes().strip()


def session_token(page: Page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "callwright_session")


def app_client(server: ServeProcess, token: str | None) -> httpx.Client:
    cookies = {"callwright_session": token} if token else {}
    return httpx.Client(base_url=server.base_url, cookies=cookies, trust_env=False, follow_redirects=False)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def test_signing_up_shows_the_key_once_and_explains_the_pending_review(server, page):
    page.goto(f"{server.base_url}/app/signup")
    shot(page, "signup")
    page.get_by_label("Name").fill("Ada")
    page.get_by_label("E-mail").fill("dash-signup@example.com")
    page.get_by_label(re.compile("Password")).fill("correct horse battery")
    page.get_by_role("button", name="Create the account").click()
    secret = page.get_by_label("Your first API key").input_value()
    assert secret.startswith("sk_")
    # SPEC.md Resources › API key: the prefix (the first 16 characters) names the key from now on.
    expect(page.locator("main code").filter(has_text=secret[:16])).to_have_text(f"{secret[:16]}…")
    expect(page.get_by_text("pending review")).to_be_visible()
    shot(page, "signed-up")
    with httpx.Client(base_url=server.base_url, trust_env=False) as http:  # the key is real, and gated
        refused = http.get("/v1/calls", headers=bearer(secret))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "account_pending_review"

    page.get_by_role("link", name="Go to the dashboard").click()
    expect(page.get_by_role("status").filter(has_text="pending review")).to_contain_text("An operator approves")
    assert secret not in page.content()
    shot(page, "pending-review")


def test_a_refused_sign_up_keeps_what_was_typed(server, page):
    page.goto(f"{server.base_url}/app/signup")
    page.get_by_label("Name").fill("Bea")
    page.get_by_label("E-mail").fill("dash-short@example.com")
    page.get_by_label(re.compile("Password")).evaluate("el => el.removeAttribute('minlength')")
    page.get_by_label(re.compile("Password")).fill("short")
    page.get_by_role("button", name="Create the account").click()
    expect(page.locator(".field-error")).to_contain_text("at least 10 characters")
    assert page.get_by_label("E-mail").input_value() == "dash-short@example.com"
    assert page.get_by_label("Name").input_value() == "Bea"


def test_log_in_sets_a_strict_cookie_and_log_out_ends_the_session_everywhere(server, page):
    account = new_account(server)
    page.goto(f"{server.base_url}/app/calls")
    expect(page).to_have_url(re.compile(r"/app/login\?next=/app/calls"))
    shot(page, "login")
    page.get_by_label("E-mail").fill(account["email"])
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("invalid e-mail or password")
    assert page.get_by_label("E-mail").input_value() == account["email"]

    log_in(page, server, account)
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "callwright_session"]
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"], cookie["secure"]) == (True, "Lax", "/app", False)
    assert page.evaluate("document.cookie") == ""  # HttpOnly: no script of the page can read it
    token = cookie["value"]

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/app/login.*reason=logged_out"))
    expect(page.get_by_text("You are logged out.")).to_be_visible()
    shot(page, "logged-out")
    with app_client(server, token) as http:  # the old token, replayed, opens nothing
        for path in ("/app/calls", "/app/keys", "/app/analytics"):
            answer = http.get(path)
            assert answer.status_code == 303 and answer.headers["location"].startswith("/app/login"), path
        assert http.get("/auth/me", headers=bearer(token)).status_code == 401


def test_a_change_without_the_csrf_token_changes_nothing(server, page):
    account = new_account(server)
    log_in(page, server, account)
    token = session_token(page)
    with app_client(server, token) as http:
        valid = csrf_of(http.get("/app/calls").text)
        for sent in ({}, {"csrf_token": "forged"}, {"csrf_token": valid[:-2] + "xx"}):
            refused = http.post("/app/logout", data=sent)
            assert refused.status_code == 403 and "csrf_failed" in refused.text, sent
            created = http.post("/app/keys/create", data={**sent, "name": "sneaky"})
            assert created.status_code == 403, sent
        assert http.get("/app/calls").status_code == 200  # the session was not logged out
    with httpx.Client(base_url=server.base_url, trust_env=False) as api:
        names = [k.get("name") for k in api.get("/auth/api-keys", headers=bearer(account["secret"])).json()["data"]]
    assert "sneaky" not in names
    with app_client(server, None) as http:  # another site cannot log a visitor in to its own account
        forged_login = http.post("/app/login", data={"email": account["email"], "password": account["password"]},
                                 headers={"Origin": "https://evil.example.com"})
        assert forged_login.status_code == 403 and "set-cookie" not in forged_login.headers
        assert http.post("/app/login", data={"email": account["email"], "password": account["password"]},
                         headers={"Origin": server.base_url}).status_code == 303
    other = new_account(server)  # another user's token is not this session's
    log_in(page, server, other)
    with app_client(server, token) as http:
        other_csrf = csrf_of(page.content())
        assert http.post("/app/logout", data={"csrf_token": other_csrf}).status_code == 403


def test_v1_refuses_the_session_as_cookie_and_as_bearer(server, page):
    account = new_account(server)
    log_in(page, server, account)
    token = session_token(page)
    with httpx.Client(base_url=server.base_url, trust_env=False, cookies={"callwright_session": token}) as http:
        assert http.get("/v1/calls").json()["error"]["code"] == "missing_credentials"
        answer = http.get("/v1/calls", headers=bearer(token))
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "api_key_required"


def forged_session(server: ServeProcess, account: dict[str, Any], *, ended_ago: timedelta) -> str:
    tokens = JwtSessionTokens(derive(master_secret(server), "session-jwt"))
    issued = tokens.issue(user_id=account["user_id"], tenant_id=account["tenant_id"],
                          now=datetime.now(timezone.utc) - timedelta(hours=24) - ended_ago)
    return issued.token


def test_an_ended_session_goes_to_log_in_and_back_to_the_page(server, page):
    account = new_account(server)
    page.context.add_cookies([{"name": "callwright_session", "value": forged_session(server, account,
                              ended_ago=timedelta(minutes=1)), "domain": "127.0.0.1", "path": "/app"}])
    page.goto(f"{server.base_url}/app/calls?status=completed")
    expect(page).to_have_url(re.compile(r"/app/login\?next=/app/calls%3Fstatus%3Dcompleted&reason=ended"))
    expect(page.get_by_role("status")).to_contain_text("Your session has ended")
    shot(page, "session-ended")
    page.get_by_label("E-mail").fill(account["email"])
    page.get_by_label("Password").fill(account["password"])
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/app/calls\?status=completed$"))


def test_the_password_reset_from_the_e_mailed_link(server, page):
    account = new_account(server)
    page.goto(f"{server.base_url}/app/login")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("E-mail").fill(account["email"])
    page.get_by_role("button", name="Send the reset link").click()
    expect(page.get_by_role("status")).to_contain_text("reset link is on its way")
    shot(page, "forgot-password")
    link = reset_link(server, account["email"])
    page.goto(link)
    page.get_by_label("New password").fill("a brand new password")
    page.get_by_role("button", name="Set the new password").click()
    page.get_by_role("link", name="Log in to the dashboard").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    log_in(page, server, {**account, "password": "a brand new password"})
    expect(page.get_by_role("heading", name="Calls", exact=True)).to_be_visible()


def reset_link(server: ServeProcess, address: str) -> str:
    assert server.data_dir is not None
    for path in sorted((server.data_dir / "outbox").glob("*.eml"), key=lambda p: p.stat().st_mtime, reverse=True):
        message = email.message_from_bytes(path.read_bytes())
        if message["To"] == address and "reset" in message["Subject"].lower():
            found = re.search(r"https?://\S+/reset-password\?token=\S+", message.get_payload(decode=True).decode())
            assert found, message
            return found.group(0)
    raise AssertionError(f"no reset e-mail to {address}")


def test_no_page_carries_an_api_key_and_each_reads_well(server, page):
    """Every page of the navigation holds neither the account's key nor one made since; each answers
    with the CSP that forbids inline script, passes the accessibility audit (labels, names, headings,
    contrast) and fits 375 px without scrolling sideways."""
    account = new_account(server)
    with httpx.Client(base_url=server.base_url, trust_env=False) as api:
        made = api.post("/auth/api-keys", headers=bearer(account["secret"]), json={"name": "made by api"})
        assert made.status_code == 201, made.text
    secrets = [account["secret"], made.json()["secret"]]
    log_in(page, server, account)
    for key, _label, path in NAV:
        response = page.goto(f"{server.base_url}{path}")
        assert response is not None and response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"]
        html = page.content()
        assert not [s for s in secrets if s in html], path
        assert not re.search(r"sk_(live|test)_[A-Za-z0-9]{16,}", html), path
        assert accessibility_problems(page) == [], path
        page.set_viewport_size(PHONE)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], f"{path} scrolls sideways"
        shot(page, f"nav-{key}-375")
        page.set_viewport_size({"width": 1280, "height": 800})


def test_a_form_sent_after_the_session_ended_is_kept_through_the_login(server, page):
    """24 h expiry with a form half filled in: the send goes to the login form, and after logging
    in again the form is back with what was typed, and no call was placed meanwhile."""
    account = new_account(server)
    log_in(page, server, account)
    page.goto(f"{server.base_url}/app/new-call")
    page.get_by_label("Number to call").fill("+442071838750")
    page.get_by_label("Objective").fill("Confirm the Tuesday delivery slot")
    page.locator("[data-row]").first.get_by_label("Field name").fill("slot_confirmed")
    page.context.clear_cookies()
    page.context.add_cookies([{"name": "callwright_session", "value": forged_session(server, account,
                              ended_ago=timedelta(seconds=5)), "domain": "127.0.0.1", "path": "/app"}])
    page.get_by_role("button", name="Place the call").click()
    expect(page).to_have_url(re.compile(r"/app/login\?next=/app/new-call&reason=ended"))
    page.get_by_label("E-mail").fill(account["email"])
    page.get_by_label("Password").fill(account["password"])
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/app/new-call$"))
    expect(page.get_by_label("Number to call")).to_have_value("+442071838750")
    expect(page.get_by_label("Objective")).to_have_value("Confirm the Tuesday delivery slot")
    expect(page.locator("[data-row]").first.get_by_label("Field name")).to_have_value("slot_confirmed")
    with httpx.Client(base_url=server.base_url, trust_env=False) as api:
        assert api.get("/v1/calls", headers=bearer(account["secret"])).json()["data"] == []
