"""``ProviderCredential`` (SPEC.md Provider credential): one per tenant and provider, the caller
number only from the account's numbers, rebuilt from its events exactly."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from domain.errors import NumberNotInAccountError
from domain.providers.credential import TWILIO, ProviderCredential

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
FACTS = {"account_sid": "AC" + "0" * 32, "sealed_token": "v1.sealed", "last4": "beef", "account_name": "Acme",
         "numbers": [{"number": "+14155550100", "friendly": "Main"}]}


def credential() -> ProviderCredential:
    return ProviderCredential(tenant_id="ten_1", provider=TWILIO, by="usr_1", at=NOW, **FACTS)


def test_the_id_is_one_per_tenant_and_provider():
    assert credential().id == ProviderCredential.create_id("ten_1", TWILIO)
    assert ProviderCredential.create_id("ten_1", TWILIO) != ProviderCredential.create_id("ten_2", TWILIO)


def test_only_a_number_of_the_account_can_be_the_caller_number():
    held = credential()
    with pytest.raises(NumberNotInAccountError):
        held.select_number("+14155550199", by="usr_1", at=NOW)
    held.select_number("+14155550100", by="usr_1", at=NOW)
    assert held.caller_number == "+14155550100"


def test_reverifying_an_account_without_the_caller_number_clears_it():
    held = credential()
    held.select_number("+14155550100", by="usr_1", at=NOW)
    held.reverify(**{**FACTS, "numbers": [{"number": "+14155550555", "friendly": "Other"}]}, by="usr_1", at=NOW)
    assert held.caller_number is None and held.verified


def test_replaying_the_events_rebuilds_the_same_credential():
    held = credential()
    held.select_number("+14155550100", by="usr_1", at=NOW)
    events = held.collect_events()
    rebuilt = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    assert rebuilt is not None and rebuilt.__dict__ == held.__dict__
    assert all("token" not in name or name == "sealed_token" for e in events for name in vars(e))
