"""The dashboard's session in process: the cookie's flags (Secure behind https), and the rate limit:
a page's request counts once in the user's budget, however many API answers the page shows (its
in-process calls are not counted again); past the budget a page answers 429 in words with
``Retry-After``."""

from __future__ import annotations

from dataclasses import replace

import re

from tests.support.setup import PASSWORD

LIMIT = 60


def logged_in(client, account) -> str:
    answer = client.post("/app/login", data={"email": account.email, "password": PASSWORD, "next": "/app/calls"},
                         follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return answer.cookies["callwright_session"]


def remaining(client, token: str) -> int:
    return int(client.get("/auth/me", headers={"Authorization": f"Bearer {token}"}).headers["X-RateLimit-Remaining"])


def test_a_page_counts_once_however_many_api_answers_it_shows(client, account):
    token = logged_in(client, account)
    before = remaining(client, token)
    for _ in range(3):
        page = client.get("/app/analytics")  # five reports: five API calls in process
        assert page.status_code == 200 and "Analytics" in page.text
    assert remaining(client, token) == before - 3 - 1  # three pages, and this /auth/me


def test_past_the_budget_a_page_answers_429_in_words(client, account):
    token = logged_in(client, account)
    for _ in range(remaining(client, token)):
        assert client.get("/app/keys").status_code == 200
    refused = client.get("/app/keys")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert re.search(r"Too many requests.*Wait \d+ seconds", refused.text, re.S)


def test_the_cookie_is_httponly_lax_scoped_to_the_dashboard_and_secure_behind_https(client, container, account):
    plain = client.post("/app/login", data={"email": account.email, "password": PASSWORD}, follow_redirects=False)
    cookie = plain.headers["set-cookie"].lower()
    assert all(flag in cookie for flag in ("httponly", "samesite=lax", "path=/app", "max-age=86400"))
    assert "secure" not in cookie
    services = client.app.state.services
    client.app.state.services = replace(services, dashboard=replace(services.dashboard,
                                                                     public_base_url="https://calls.example.com"))
    behind_https = client.post("/app/login", data={"email": account.email, "password": PASSWORD},
                               follow_redirects=False)
    assert "secure" in behind_https.headers["set-cookie"].lower()


def test_a_static_file_name_no_file_can_have_is_not_found_not_a_server_error(client):
    for path in ("/app/static/%00", "/app/static/app%00.css", "/schema/assets/%00", "/app/static/" + "a" * 300,
                 "/schema/assets/" + "a" * 300):
        assert client.get(path).status_code == 404, path
    assert client.get("/app/static/app.css").headers["content-type"].startswith("text/css")
