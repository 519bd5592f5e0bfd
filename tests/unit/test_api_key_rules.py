"""ApiKey aggregate rules (SPEC.md "API key" state table), Given/When/Then on the aggregate alone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from domain.accounts import api_key as rules
from domain.accounts.api_key import ApiKey
from domain.errors import KeyAlreadyRotatedError, KeyRevokedError

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)


def issued(scopes=None, number_ids=None) -> ApiKey:
    secret = rules.generate_secret()
    return ApiKey(
        tenant_id="ten_x", user_id="usr_x", key_hash=rules.hash_secret(secret), prefix=secret[:16],
        name=None, scopes=scopes, number_ids=number_ids, issued_by="test", at=NOW,
    )


def test_secret_has_the_spec_format():
    secret = rules.generate_secret()
    assert secret.startswith("sk_live_")
    suffix = secret[len("sk_live_"):]
    assert len(suffix) == 32
    assert set(suffix) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert rules.looks_like_secret(secret)


def test_secrets_do_not_repeat():
    assert len({rules.generate_secret() for _ in range(1000)}) == 1000


def test_key_id_is_derived_from_the_hash_so_lookup_is_one_read():
    key = issued()
    assert key.id == rules.key_uuid(key.key_hash)
    assert key.key_id.startswith("key_")


def test_rotation_keeps_the_old_key_valid_for_24_hours():
    key = issued()
    expires_at = key.rotate("key_new", by="usr_x", now=NOW)
    assert expires_at == NOW + timedelta(hours=24)
    assert key.status(NOW + timedelta(hours=23, minutes=59)) == rules.ROTATED
    assert key.status(NOW + timedelta(hours=24)) == rules.EXPIRED


def test_a_key_is_rotated_only_once():
    key = issued()
    key.rotate("key_new", by="usr_x", now=NOW)
    with pytest.raises(KeyAlreadyRotatedError):
        key.rotate("key_other", by="usr_x", now=NOW)


def test_a_revoked_key_cannot_be_rotated_and_revoking_again_changes_nothing():
    key = issued()
    assert key.revoke(by="usr_x", now=NOW) is True
    assert key.revoke(by="usr_x", now=NOW) is False
    assert key.status(NOW) == rules.REVOKED
    with pytest.raises(KeyRevokedError):
        key.rotate("key_new", by="usr_x", now=NOW)


def test_every_event_carries_the_tenant_id():
    key = issued(scopes=("calls:read",))
    key.rotate("key_new", by="usr_x", now=NOW)
    key.record_use_during_grace("GET", "/v1/calls", NOW)
    key.revoke(by="usr_x", now=NOW)
    events = key.collect_events()
    assert [type(e).__name__ for e in events] == ["Issued", "Rotated", "RotatedKeyUsed", "Revoked"]
    assert all(e.tenant_id == "ten_x" for e in events)
