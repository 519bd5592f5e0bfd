"""The numbers use cases and lookups on the popo backend (SPEC.md Numbers, Authentication §6):
registration needs a number of the verified carrier account and a free E.164, the lookups find
the active holder with aggregate reads, a restricted key reaches only its numbers."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from application.calling.app import Calling
from application.errors import ConflictError, FieldError, NotFoundError, PermissionDeniedError, ValidationFailedError
from application.numbers import registry
from application.numbers.lookups import number_for_e164, tenant_number
from application.principal import API_KEY, Principal
from domain.providers.credential import TWILIO, ProviderCredential

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
MAIN, SECOND, THIRD = "+14155550100", "+14155550101", "+14155550102"


def principal(tenant_id: str, number_ids: tuple[str, ...] | None = None) -> Principal:
    return Principal(kind=API_KEY, tenant_id=tenant_id, user_id=f"usr_{tenant_id}", verification_status="approved",
                     tier="standard", key_id=f"key_{tenant_id}", number_ids=number_ids)


def verify_carrier(calling: Calling, tenant_id: str, numbers: list[str]) -> None:
    calling.commit(ProviderCredential(
        tenant_id=tenant_id, provider=TWILIO, account_sid="AC" + "0" * 32, sealed_token="v1.sealed", last4="beef",
        account_name="Acme", numbers=[{"number": n, "friendly": n} for n in numbers], by="usr_1", at=NOW))


@pytest.fixture
def calling(memory_container) -> Calling:
    built = memory_container.calling
    for tenant_id in ("ten_a", "ten_b"):
        verify_carrier(built, tenant_id, [MAIN, SECOND, THIRD])
    return built


def register(calling: Calling, tenant_id: str, e164: str, **settings) -> str:
    request = registry.ByoNumberRequest(e164=e164, settings=settings)
    return registry.register_byo(calling, principal(tenant_id), request).number_id


def problem_types(exc: ValidationFailedError) -> list[tuple[list, str]]:
    return [(loc, kind) for loc, _, kind, _ in exc.problems]


def test_a_registered_number_is_found_by_its_e164(calling):
    number_id = register(calling, "ten_a", MAIN, greeting="Hello")
    found = number_for_e164(calling, MAIN)
    assert found is not None and found.number_id == number_id and found.greeting == "Hello"
    assert tenant_number(calling, "ten_a", MAIN).number_id == number_id
    assert tenant_number(calling, "ten_b", MAIN) is None
    assert number_for_e164(calling, SECOND) is None and number_for_e164(calling, "not a number") is None


def test_a_number_outside_the_carrier_account_is_refused(calling):
    with pytest.raises(ValidationFailedError) as refused:
        register(calling, "ten_a", "+14155550199")
    assert problem_types(refused.value) == [(["body", "e164"], "number_not_in_carrier_account")]


def test_without_verified_carrier_credentials_no_number_can_be_registered(calling):
    with pytest.raises(ValidationFailedError) as refused:
        register(calling, "ten_c", MAIN)
    assert problem_types(refused.value) == [(["body", "e164"], "carrier_not_configured")]


def test_settings_problems_and_a_malformed_e164_are_reported_together(calling):
    with pytest.raises(ValidationFailedError) as refused:
        register(calling, "ten_a", "0415", transfer_max_attempts=9)
    assert problem_types(refused.value) == [(["body", "e164"], "invalid_e164"),
                                            (["body", "transfer_max_attempts"], "transfer_max_attempts")]


def test_an_e164_held_by_an_active_number_is_taken_for_every_tenant(calling):
    register(calling, "ten_a", MAIN)
    for tenant_id in ("ten_a", "ten_b"):
        with pytest.raises(ConflictError) as taken:
            register(calling, tenant_id, MAIN)
        assert taken.value.code == "number_taken"


def test_disconnecting_frees_the_e164_for_any_tenant(calling):
    first = register(calling, "ten_a", MAIN)
    registry.disconnect(calling, principal("ten_a"), first)
    assert number_for_e164(calling, MAIN) is None
    assert registry.get(calling, principal("ten_a"), first).active is False

    second = register(calling, "ten_b", MAIN)
    assert second != first
    assert number_for_e164(calling, MAIN).tenant_id == "ten_b"
    assert tenant_number(calling, "ten_a", MAIN) is None
    with pytest.raises(NotFoundError):
        registry.disconnect(calling, principal("ten_a"), first)  # already disconnected


def test_a_stale_disconnect_does_not_release_the_new_holders_claim(calling):
    first = register(calling, "ten_a", MAIN)
    registry.disconnect(calling, principal("ten_a"), first)
    register(calling, "ten_a", MAIN)
    with pytest.raises(NotFoundError):
        registry.disconnect(calling, principal("ten_a"), first)
    assert number_for_e164(calling, MAIN) is not None


def test_an_update_changes_only_the_given_fields(calling):
    number_id = register(calling, "ten_a", MAIN, persona="Warm")
    changed = registry.update(calling, principal("ten_a"), number_id,
                              {"transfer_destinations": [{"label": "Desk", "e164": "+442071838750"}]})
    assert changed.persona == "Warm" and changed.transfer_destinations == [{"label": "Desk", "e164": "+442071838750"}]
    assert number_for_e164(calling, MAIN).transfer_destinations == changed.transfer_destinations


def test_another_tenants_number_is_not_found_and_a_malformed_id_is_a_422(calling):
    number_id = register(calling, "ten_a", MAIN)
    with pytest.raises(NotFoundError):
        registry.get(calling, principal("ten_b"), number_id)
    with pytest.raises(NotFoundError):
        registry.update(calling, principal("ten_b"), number_id, {"greeting": "Mine now"})
    with pytest.raises(FieldError) as malformed:
        registry.get(calling, principal("ten_a"), "not-a-uuid")
    assert malformed.value.loc == ["path", "number_id"]


def test_a_restricted_key_reaches_only_its_numbers_and_cannot_add_one(calling):
    """SPEC.md Authentication §6 and Errors: 403 for a target number outside the key's number_ids."""
    mine, other = register(calling, "ten_a", MAIN), register(calling, "ten_a", SECOND)
    restricted = principal("ten_a", number_ids=(mine,))
    assert [n.number_id for n in registry.list_numbers(calling, restricted).numbers] == [mine]
    assert registry.get(calling, restricted, mine).number_id == mine
    for attempt in (lambda: registry.get(calling, restricted, other),
                    lambda: registry.update(calling, restricted, other, {"greeting": "Hi"}),
                    lambda: registry.disconnect(calling, restricted, other),
                    lambda: registry.register_byo(calling, restricted, registry.ByoNumberRequest(e164=THIRD))):
        with pytest.raises(PermissionDeniedError) as refused:
            attempt()
        assert refused.value.code == "number_not_allowed"


def test_the_list_pages_with_an_opaque_cursor_in_registration_order(calling):
    ids = [register(calling, "ten_a", e164) for e164 in (MAIN, SECOND, THIRD)]
    registry.disconnect(calling, principal("ten_a"), ids[1])
    first = registry.list_numbers(calling, principal("ten_a"), limit=1)
    assert [n.number_id for n in first.numbers] == [ids[0]] and first.next_cursor
    second = registry.list_numbers(calling, principal("ten_a"), limit=1, cursor=first.next_cursor)
    assert [n.number_id for n in second.numbers] == [ids[2]] and second.next_cursor is None
    assert registry.list_numbers(calling, principal("ten_b")).numbers == []
    with pytest.raises(FieldError) as bad:
        registry.list_numbers(calling, principal("ten_a"), cursor="bm90IGEgY3Vyc29y")
    assert (bad.value.loc, bad.value.code) == (["query", "cursor"], "invalid_cursor")


def test_number_ids_are_uuids():
    """SPEC.md Number: "The identifier is a UUID"."""
    from domain.numbers.number import Number

    number = Number.register(tenant_id="ten_a", e164=MAIN, fields={}, by="key", at=NOW)
    assert str(uuid.UUID(number.number_id)) == number.number_id
