"""SPEC.md Auth: sign-up answers 201 with the initial key shown once."""


def test_signup_returns_the_initial_key_once(client):
    response = client.post("/auth/signup", json={"email": "Dev@Example.com", "password": "correct horse battery"})
    assert response.status_code == 201
    body = response.json()
    assert body["verification_status"] == "pending_review"
    assert body["email"] == "dev@example.com"
    assert body["api_key"].startswith("sk_live_") and len(body["api_key"]) == 40
    assert body["key_id"].startswith("key_") and body["user_id"].startswith("usr_") and body["tenant_id"].startswith("ten_")
