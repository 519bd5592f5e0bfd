"""SPEC.md Auth: sign-up answers 201 with the initial key shown once."""

from tests.support.openapi_document import resolved, validator


def test_signup_returns_the_initial_key_once(client):
    response = client.post("/auth/signup", json={"email": "Dev@Example.com", "password": "correct horse battery"})
    assert response.status_code == 201
    body = response.json()
    assert body["verification_status"] == "pending_review"
    assert body["email"] == "dev@example.com"
    assert body["secret"].startswith("sk_live_") and len(body["secret"]) == 40
    assert body["key_id"].startswith("key_") and body["user_id"].startswith("usr_") and body["tenant_id"].startswith("ten_")


def test_signup_answers_the_key_as_create_and_rotate_do(client):
    """SPEC.md Resources › API key: ``secret`` (returned once) and ``prefix`` (its first 16
    characters), as ``POST /auth/api-keys`` answers them; ``api_key`` stays one release as a
    deprecated copy of ``secret`` (CHANGELOG.md, Versioning §2)."""
    body = client.post("/auth/signup", json={"email": "prefix@example.com", "password": "correct horse battery"}).json()

    assert body["secret"].startswith("sk_live_") and body["prefix"] == body["secret"][:16]
    assert body["api_key"] == body["secret"]
    created = client.post("/auth/api-keys", headers={"Authorization": f"Bearer {body['secret']}"})
    assert created.status_code == 201, created.text
    assert {"key_id", "prefix", "secret"} <= set(body) and {"key_id", "prefix", "secret"} <= set(created.json())
    listed = client.get("/auth/api-keys", headers={"Authorization": f"Bearer {body['secret']}"}).json()["data"]
    assert {item["key_id"]: item["prefix"] for item in listed}[body["key_id"]] == body["prefix"]


def test_the_openapi_document_types_the_signup_key_and_marks_api_key_deprecated(client):
    """SPEC.md Resources › API key and Versioning §2: the document says ``secret`` and ``prefix``
    are always answered and ``api_key`` is deprecated; its example is valid and agrees."""
    document = client.get("/schema/openapi.json").json()
    answer = document["paths"]["/auth/signup"]["post"]["responses"]["201"]["content"]["application/json"]
    schema = resolved(document, answer["schema"])

    assert {"key_id", "prefix", "secret", "api_key"} <= set(schema["required"])
    assert schema["properties"]["api_key"].get("deprecated") is True
    assert "secret" in schema["properties"]["api_key"]["description"]
    assert not any(schema["properties"][name].get("deprecated") for name in ("key_id", "prefix", "secret"))
    example = answer["example"]
    validator(document, answer["schema"]).validate(example)
    assert example["secret"].startswith("sk_live_") and example["prefix"] == example["secret"][:16]
    assert example["api_key"] == example["secret"]
