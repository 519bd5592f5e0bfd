"""Passwords (scrypt), session JWTs and the master key."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import jwt
import pytest

from adapters.crypto import master_key
from adapters.crypto.passwords import ScryptPasswordHasher
from adapters.crypto.sessions import JwtSessionTokens
from application.errors import InvalidTokenError

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)


def test_scrypt_hash_verifies_only_the_right_password():
    hasher = ScryptPasswordHasher(n=2**10)
    encoded = hasher.hash("correct horse battery")
    assert encoded.startswith("scrypt$1024$8$1$")
    assert "correct horse battery" not in encoded
    assert hasher.verify("correct horse battery", encoded)
    assert not hasher.verify("correct horse batterY", encoded)
    assert not hasher.verify("x", "not-a-hash")


def test_hashes_stay_verifiable_after_the_cost_changes():
    old = ScryptPasswordHasher(n=2**10).hash("correct horse battery")
    assert ScryptPasswordHasher(n=2**11).verify("correct horse battery", old)


def test_dummy_verification_costs_about_as_much_as_a_real_one():
    hasher = ScryptPasswordHasher(n=2**14)
    encoded = hasher.hash("correct horse battery")
    started = time.perf_counter()
    for _ in range(3):
        hasher.verify("wrong password!", encoded)
    real = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(3):
        hasher.verify_dummy("wrong password!")
    dummy = time.perf_counter() - started
    assert 0.33 < dummy / real < 3.0


def test_session_token_round_trips_and_expires_after_24_hours():
    tokens = JwtSessionTokens(b"k" * 32)
    issued = tokens.issue(user_id="usr_a", tenant_id="ten_a", now=NOW)
    claims = tokens.decode(issued.token, NOW + timedelta(hours=23))
    assert claims.user_id == "usr_a" and claims.tenant_id == "ten_a" and claims.jti == issued.claims.jti
    with pytest.raises(InvalidTokenError):
        tokens.decode(issued.token, NOW + timedelta(hours=24))


def test_session_token_signed_with_another_key_or_algorithm_is_refused():
    tokens = JwtSessionTokens(b"k" * 32)
    forged = JwtSessionTokens(b"x" * 32).issue(user_id="usr_a", tenant_id="ten_a", now=NOW).token
    with pytest.raises(InvalidTokenError):
        tokens.decode(forged, NOW)
    unsigned = jwt.encode({"sub": "usr_a", "tid": "ten_a", "jti": "j", "exp": 9999999999}, None, algorithm="none")
    with pytest.raises(InvalidTokenError):
        tokens.decode(unsigned, NOW)
    with pytest.raises(InvalidTokenError):
        tokens.decode("eyJ.garbage.here", NOW)


def test_master_key_is_generated_once_with_private_permissions(tmp_path):
    first, generated = master_key.load_or_create(None, tmp_path)
    again, generated_again = master_key.load_or_create(None, tmp_path)
    assert generated and not generated_again and first == again
    assert (tmp_path / "secret.key").stat().st_mode & 0o077 == 0
    assert master_key.derive(first, "a") != master_key.derive(first, "b")
    configured, _ = master_key.load_or_create("configured", tmp_path)
    assert configured == b"configured"
