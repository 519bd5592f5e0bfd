"""The dashboard's session helpers: where a login may send the browser back to, the CSRF token's
binding to one session under one key, and how the API's answers read on a page."""

from __future__ import annotations

import pytest

from entrypoints.http.dashboard.api import Answer
from entrypoints.http.dashboard.session import csrf_token, login_location, safe_next


@pytest.mark.parametrize("asked", [
    "/app/calls", "/app/calls?status=completed", "/app/numbers/3f0c/edit",
])
def test_next_keeps_a_dashboard_path(asked):
    assert safe_next(asked) == asked


@pytest.mark.parametrize("asked", [
    None, "", "https://evil.example.com/app", "//evil.example.com/app", "/v1/calls", "/auth/me",
    "/app\\@evil.example.com", "javascript:alert(1)", "app/calls",
])
def test_next_never_leaves_the_dashboard(asked):
    assert safe_next(asked) == "/app/calls"


def test_the_login_location_quotes_the_next_page():
    assert login_location("/app/calls?status=failed&limit=5", "ended") == \
        "/app/login?next=/app/calls%3Fstatus%3Dfailed%26limit%3D5&reason=ended"
    assert login_location("//evil.example.com", "login") == "/app/login?next=/app/calls&reason=login"


def test_a_csrf_token_belongs_to_one_session_under_one_key():
    key, other_key = b"k" * 32, b"o" * 32
    token = csrf_token(key, "jti-1")
    assert token == csrf_token(key, "jti-1")
    assert token != csrf_token(key, "jti-2")
    assert token != csrf_token(other_key, "jti-1")
    assert len(token) == 43 and "=" not in token


def test_a_422_reads_as_problems_by_field():
    answer = Answer(422, {"detail": [
        {"loc": ["body", "to"], "msg": "not a phone number", "type": "value_error"},
        {"loc": ["body", "outcome_schema", "price", "type"], "msg": "unknown type", "type": "value_error"},
        {"loc": ["body"], "msg": "a JSON body is required", "type": "missing"},
    ]})
    assert answer.problem_for("to") == "not a phone number"
    assert answer.problem_for("outcome_schema") == "unknown type"
    assert answer.problem_for("objective") is None
    assert answer.error == {"code": "validation_error", "message": "to: not a phone number; outcome_schema.price.type: "
                                                                  "unknown type; a JSON body is required"}


def test_other_refusals_read_as_code_and_message():
    answer = Answer(403, {"error": {"code": "account_pending_review", "message": "pending"}})
    assert not answer.ok and answer.error == {"code": "account_pending_review", "message": "pending"}
    assert Answer(502, "Bad gateway").error == {"code": "http_502", "message": "Bad gateway"}
    assert Answer(200, {"data": []}).error == {}
