"""SPEC.md Endpoints › Auth, Authentication §3–4, Errors and Limits: sign-up, login sessions,
logout, e-mail verification and password reset, seen over HTTP."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from litestar.testing import TestClient

from adapters.email.outbox import MemoryEmailSender
from tests.support.setup import PASSWORD, signup
from tests.support.shared_app import app, client, container, mail  # noqa: F401 - module-scoped fixtures

# One app for the module: every test signs up its own account, so they do not see each other;
# moving the shared clock forward only ever ages tokens of the test that moves it.


NEW_PASSWORD = "a brand new passphrase"
_TOKEN_LINE = re.compile(r"^[A-Za-z0-9_-]{32,}$", re.MULTILINE)


def mailed_token(mail: MemoryEmailSender, email: str, kind: str) -> str:
    message = mail.last_to(email, kind)
    assert message is not None, f"no {kind} mail to {email}"
    found = _TOKEN_LINE.search(message.body)
    assert found is not None, message.body
    return found.group(0)


def login(client: TestClient[Any], email: str, password: str = PASSWORD) -> Any:
    return client.post("/auth/login", json={"email": email, "password": password})


def session_token(client: TestClient[Any], email: str, password: str = PASSWORD) -> str:
    response = login(client, email, password)
    assert response.status_code == 200, response.text
    return response.json()["access_token"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(response: Any, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] and body["error"]["message"]
    return body["error"]


def assert_unprocessable(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text
    body = response.json()
    assert set(body) == {"detail"}
    assert body["detail"], body
    for item in body["detail"]:
        assert set(item) == {"loc", "msg", "type", "input", "ctx"}
        assert isinstance(item["loc"], list) and all(isinstance(part, (str, int)) for part in item["loc"])
        assert isinstance(item["msg"], str) and isinstance(item["type"], str) and isinstance(item["ctx"], dict)
    return body["detail"]


# --- sign-up -------------------------------------------------------------------------------


def test_signup_answers_201_with_ids_status_and_a_key_shown_once(client):
    """SPEC.md Auth: POST /auth/signup creates a user and returns the initial API key (201)."""
    response = client.post("/auth/signup", json={"email": "ada@example.com", "password": PASSWORD, "name": "Ada"})

    assert response.status_code == 201
    body = response.json()
    assert set(body) >= {"user_id", "tenant_id", "email", "verification_status", "key_id", "secret", "prefix"}
    assert body["email"] == "ada@example.com"
    assert body["verification_status"] == "pending_review"
    assert re.fullmatch(r"sk_live_[A-Za-z0-9_-]{32}", body["secret"])
    listed = client.get("/auth/api-keys", headers=bearer(body["secret"])).json()["items"]
    assert [item["key_id"] for item in listed] == [body["key_id"]]
    assert body["secret"] not in str(listed)


def test_signup_with_an_email_already_taken_in_any_letter_case_is_409(client):
    signup(client, email="dup@example.com")

    response = client.post("/auth/signup", json={"email": "DUP@Example.COM", "password": PASSWORD})

    error = assert_error(response, 409)
    assert error["code"] == "email_taken"


def test_signup_with_a_password_under_ten_characters_is_422_in_the_spec_shape(client):
    """SPEC.md Errors: 422 with {detail: [{loc, msg, type, input, ctx}]}."""
    response = client.post("/auth/signup", json={"email": "short@example.com", "password": "123456789"})

    [error] = assert_unprocessable(response)
    assert error["loc"] == ["body", "password"]
    assert error["type"] == "string_too_short"
    assert error["input"] == "123456789"
    assert error["ctx"] == {"min_length": 10}


def test_signup_with_an_invalid_email_is_422(client):
    for email in ("not-an-email", "a@b", "two@@example.com", "space in@example.com"):
        response = client.post("/auth/signup", json={"email": email, "password": PASSWORD})

        [error] = assert_unprocessable(response)
        assert error["loc"] == ["body", "email"], email


def test_signup_with_an_unknown_body_field_is_422_extra_forbidden(client):
    response = client.post("/auth/signup", json={"email": "x@example.com", "password": PASSWORD, "role": "admin"})

    [error] = assert_unprocessable(response)
    assert error["loc"] == ["body", "role"]
    assert error["type"] == "extra_forbidden"
    assert error["input"] == "admin"


# --- login ---------------------------------------------------------------------------------


def test_login_returns_a_bearer_jwt_valid_for_24_hours(client, pending_account):
    """SPEC.md Authentication §3 and Limits: a session JWT is valid 24 h."""
    response = login(client, pending_account.email)

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in"}
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 86400
    assert body["access_token"].count(".") == 2


def test_login_with_the_email_in_another_case_works(client, pending_account):
    assert login(client, pending_account.email.upper()).status_code == 200


def test_wrong_password_and_unknown_email_give_the_identical_401(client, pending_account):
    wrong_password = login(client, pending_account.email, "not the password at all")
    unknown_email = login(client, "nobody@example.com")

    assert_error(wrong_password, 401)
    assert wrong_password.status_code == unknown_email.status_code
    assert wrong_password.json() == unknown_email.json()


# --- sessions ------------------------------------------------------------------------------


def test_session_token_on_auth_me_returns_user_tenant_and_verification_status(client, pending_account):
    token = session_token(client, pending_account.email)

    response = client.get("/auth/me", headers=bearer(token))

    assert response.status_code == 200
    body = response.json()
    assert body["user_id"] == pending_account.user_id
    assert body["tenant_id"] == pending_account.tenant_id
    assert body["email"] == pending_account.email
    assert body["verification_status"] == "pending_review"
    assert body["email_verified"] is False
    assert body["auth"]["kind"] == "session"


def test_session_token_on_auth_me_reflects_approval(client, account):
    token = session_token(client, account.email)

    body = client.get("/auth/me", headers=bearer(token)).json()

    assert body["verification_status"] != "pending_review"


def test_session_token_on_a_v1_route_is_401_telling_to_use_an_api_key(client, account):
    """SPEC.md Authentication §3: a JWT is not accepted on /v1/* and the 401 says to use an API key."""
    token = session_token(client, account.email)

    response = client.get("/v1/audit-events", headers=bearer(token))

    error = assert_error(response, 401)
    assert "api key" in error["message"].lower()
    assert client.get("/v1/audit-events", headers=account.headers).status_code == 200


def test_logout_with_the_token_in_the_body_blocklists_its_jti(client, pending_account):
    """SPEC.md Session token: POST /auth/logout blocklists the jti until natural expiry."""
    token = session_token(client, pending_account.email)
    assert client.get("/auth/me", headers=bearer(token)).status_code == 200

    response = client.post("/auth/logout", json={"token": token})

    assert response.status_code == 200
    assert set(response.json()) == {"status"}
    assert_error(client.get("/auth/me", headers=bearer(token)), 401)


def test_logout_with_only_the_bearer_token_blocklists_its_jti(client, pending_account):
    token = session_token(client, pending_account.email)

    response = client.post("/auth/logout", headers=bearer(token))

    assert response.status_code == 200
    assert set(response.json()) == {"status"}
    assert_error(client.get("/auth/me", headers=bearer(token)), 401)


def test_logout_leaves_other_sessions_of_the_same_user_working(client, pending_account):
    first = session_token(client, pending_account.email)
    second = session_token(client, pending_account.email)

    client.post("/auth/logout", headers=bearer(first))

    assert client.get("/auth/me", headers=bearer(second)).status_code == 200


def test_logout_without_any_token_is_401(client):
    assert_error(client.post("/auth/logout"), 401)


def test_session_expires_after_24_hours(client, container, pending_account):
    """SPEC.md Limits: Session JWT 24 h."""
    token = session_token(client, pending_account.email)
    container.clock.advance(timedelta(hours=24) - timedelta(seconds=1))
    assert client.get("/auth/me", headers=bearer(token)).status_code == 200

    container.clock.advance(timedelta(seconds=2))

    assert_error(client.get("/auth/me", headers=bearer(token)), 401)


def test_a_tampered_session_token_is_401(client, pending_account):
    token = session_token(client, pending_account.email)
    header, payload, signature = token.split(".")
    tampered = ".".join([header, payload, signature[::-1]])

    assert_error(client.get("/auth/me", headers=bearer(tampered)), 401)


# --- e-mail verification -------------------------------------------------------------------


def test_verify_email_with_the_mailed_token_marks_the_address_verified(client, mail, pending_account):
    token = mailed_token(mail, pending_account.email, "email_verification")

    response = client.post("/auth/verify-email", json={"token": token})

    assert response.status_code == 200
    assert set(response.json()) == {"status"}
    me = client.get("/auth/me", headers=pending_account.headers).json()
    assert me["email_verified"] is True


def test_verification_token_is_single_use(client, mail, pending_account):
    token = mailed_token(mail, pending_account.email, "email_verification")
    assert client.post("/auth/verify-email", json={"token": token}).status_code == 200

    error = assert_error(client.post("/auth/verify-email", json={"token": token}), 400)

    assert error["code"] == "token_used"


def test_verify_email_with_an_unknown_token_is_400(client):
    error = assert_error(client.post("/auth/verify-email", json={"token": "no-such-token"}), 400)
    assert error["code"] == "invalid_token"


def test_a_reset_token_does_not_verify_an_email(client, mail, pending_account):
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    reset = mailed_token(mail, pending_account.email, "password_reset")

    assert_error(client.post("/auth/verify-email", json={"token": reset}), 400)


def test_resend_verification_answers_the_same_for_known_and_unknown_emails(client, mail, pending_account):
    """SPEC.md Errors: resend-verification never signals whether an e-mail exists."""
    before = len(mail.messages)

    known = client.post("/auth/resend-verification", json={"email": pending_account.email})
    unknown = client.post("/auth/resend-verification", json={"email": "ghost@example.com"})

    assert known.status_code == unknown.status_code == 200
    assert known.json() == unknown.json()
    assert set(known.json()) == {"status"}
    sent = mail.messages[before:]
    assert [m.to for m in sent] == [pending_account.email]
    assert sent[0].kind == "email_verification"


def test_a_resent_verification_token_verifies_the_email(client, mail, pending_account):
    client.post("/auth/resend-verification", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "email_verification")

    assert client.post("/auth/verify-email", json={"token": token}).status_code == 200
    assert client.get("/auth/me", headers=pending_account.headers).json()["email_verified"] is True


# --- password reset ------------------------------------------------------------------------


def test_forgot_password_answers_the_same_for_known_and_unknown_emails(client, mail, pending_account):
    """SPEC.md Auth: forgot-password always returns {status: ok}; Errors: never signals existence."""
    before = len(mail.messages)

    known = client.post("/auth/forgot-password", json={"email": pending_account.email})
    unknown = client.post("/auth/forgot-password", json={"email": "ghost@example.com"})

    assert known.status_code == unknown.status_code == 200
    assert known.json() == unknown.json() == {"status": "ok"}
    assert known.headers.get("content-length") == unknown.headers.get("content-length")
    sent = mail.messages[before:]
    assert [(m.to, m.kind) for m in sent] == [(pending_account.email, "password_reset")]


def test_reset_password_with_the_mailed_token_changes_the_password(client, mail, pending_account):
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "password_reset")

    response = client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD})

    assert response.status_code == 200
    assert set(response.json()) == {"status"}
    assert_error(login(client, pending_account.email, PASSWORD), 401)
    assert login(client, pending_account.email, NEW_PASSWORD).status_code == 200


def test_reset_token_is_single_use(client, mail, pending_account):
    """SPEC.md Limits: password reset token 1 h, single use."""
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "password_reset")
    assert client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD}).status_code == 200

    again = client.post("/auth/reset-password", json={"token": token, "password": "yet another passphrase"})

    assert assert_error(again, 400)["code"] == "token_used"
    assert login(client, pending_account.email, NEW_PASSWORD).status_code == 200


def test_reset_token_expires_after_one_hour(client, container, mail, pending_account):
    """SPEC.md Auth: forgot-password creates a 1-hour reset token."""
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "password_reset")

    container.clock.advance(timedelta(hours=1, seconds=1))
    response = client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD})

    assert assert_error(response, 400)["code"] == "token_expired"
    assert login(client, pending_account.email, PASSWORD).status_code == 200


def test_reset_token_is_still_good_just_before_the_hour(client, container, mail, pending_account):
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "password_reset")

    container.clock.advance(timedelta(minutes=59))

    assert client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD}).status_code == 200


def test_reset_password_with_an_unknown_token_is_400_with_a_code(client):
    response = client.post("/auth/reset-password", json={"token": "made-up-token", "password": NEW_PASSWORD})

    error = assert_error(response, 400)
    assert error["code"] == "invalid_token"


def test_reset_password_with_a_short_new_password_is_422_and_keeps_the_token(client, mail, pending_account):
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "password_reset")

    [error] = assert_unprocessable(client.post("/auth/reset-password", json={"token": token, "password": "short"}))

    assert error["loc"] == ["body", "password"]
    assert client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD}).status_code == 200


def test_a_verification_token_does_not_reset_a_password(client, mail, pending_account):
    token = mailed_token(mail, pending_account.email, "email_verification")

    assert_error(client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD}), 400)
    assert login(client, pending_account.email, PASSWORD).status_code == 200


def test_a_password_reset_ends_the_sessions_that_began_before_it(client, container, mail, pending_account):
    """A reset is what a user does after losing control of a password: older sessions stop working."""
    old_session = session_token(client, pending_account.email)
    container.clock.advance(timedelta(seconds=1))
    client.post("/auth/forgot-password", json={"email": pending_account.email})
    token = mailed_token(mail, pending_account.email, "password_reset")
    assert client.post("/auth/reset-password", json={"token": token, "password": NEW_PASSWORD}).status_code == 200
    answer = client.get("/auth/me", headers={"Authorization": f"Bearer {old_session}"})
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "session_revoked"
    fresh = session_token(client, pending_account.email, NEW_PASSWORD)
    assert client.get("/auth/me", headers={"Authorization": f"Bearer {fresh}"}).status_code == 200
