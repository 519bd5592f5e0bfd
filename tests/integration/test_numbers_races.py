"""Numbers on real PostgreSQL with the aggregate cache on: one active holder per E.164 whatever
the race, every concurrent registration of one tenant reaches its index."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

from application.errors import ConflictError
from application.numbers import registry
from application.numbers.lookups import number_for_e164
from application.principal import API_KEY, Principal
from domain.providers.credential import TWILIO, ProviderCredential

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
NUMBERS = [f"+1415555{i:04d}" for i in range(1000, 1016)]


def principal(n: int) -> Principal:
    return Principal(kind=API_KEY, tenant_id=f"ten_{n:032d}", user_id=f"usr_{n:032d}", verification_status="approved",
                     tier="standard", key_id=f"key_{n}")


def holding(container, n: int) -> Principal:
    who = principal(n)
    container.calling.commit(ProviderCredential(
        tenant_id=who.tenant_id, provider=TWILIO, account_sid="AC" + "0" * 32, sealed_token="v1.sealed", last4="beef",
        account_name="Acme", numbers=[{"number": e164, "friendly": e164} for e164 in NUMBERS], by=who.user_id,
        at=NOW))
    return who


def test_concurrent_registrations_of_one_e164_leave_exactly_one_holder(container):
    tenants = [holding(container, n) for n in range(8)]

    def attempt(who: Principal) -> str:
        try:
            registry.register_byo(container.calling, who, registry.ByoNumberRequest(e164=NUMBERS[0]))
            return "created"
        except ConflictError as exc:
            return exc.code

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(attempt, tenants * 2))
    assert results.count("created") == 1
    assert set(results) == {"created", "number_taken"}
    holder = number_for_e164(container.calling, NUMBERS[0])
    assert holder is not None and holder.active


def test_concurrent_registrations_of_one_tenant_all_reach_its_list(container):
    who = holding(container, 99)

    def register(e164: str) -> str:
        return registry.register_byo(container.calling, who, registry.ByoNumberRequest(e164=e164)).number_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(pool.map(register, NUMBERS))
    listed = registry.list_numbers(container.calling, who, limit=200).numbers
    assert {n.number_id for n in listed} == ids and len(ids) == len(NUMBERS)
    assert all(number_for_e164(container.calling, e164) is not None for e164 in NUMBERS)
