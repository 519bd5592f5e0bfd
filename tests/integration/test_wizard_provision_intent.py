"""A wizard provision buys its number at most once (issue 19 item 2; docs/decisions.md 41): the
provision and its purchase claim are saved before the carrier is asked, and a retry after a crash
finds the number the carrier bought for it by its tag, or buys it then. Faults are injected in
process around the managed provisioner's purchase; the clock is moved past the claim's lease."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from application.errors import InProgressError, UpstreamUnavailableError
from application.principal import API_KEY, Principal
from application.wizard.provision import ProvisionRequest, provision
from domain.calls.idempotency import body_fingerprint
from domain.wizard.configs import config_for
from domain.wizard.provisioning import PURCHASE_LEASE, Provisioning
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

MANAGED_SID, MANAGED_TOKEN = "AC" + "7c" * 16, "managed-token-" + "9" * 18
APP_SETTINGS = {"managed_account_sid": MANAGED_SID, "managed_auth_token": MANAGED_TOKEN}
DESCRIPTION = "A family dental practice in Austin; patients call to book checkups."
_area_codes = itertools.count(701)


class Killed(BaseException):
    """The process died at this point: nothing after it ran, not even error handling."""


class FaultyProvisioner:
    """The managed account's provisioner, dying once just before or just after a purchase request."""

    def __init__(self, real: Any, *, die_before: bool = False, die_after: bool = False) -> None:
        self.real, self.die_before, self.die_after = real, die_before, die_after
        self.lookups: list[str] = []

    def search(self, area_code: str) -> list[str]:
        return self.real.search(area_code)  # type: ignore[no-any-return]

    def purchase(self, e164: str, voice_url: str, sms_url: str, *, tag: str | None = None) -> str:
        if self.die_before:
            self.die_before = False
            raise Killed
        sid = self.real.purchase(e164, voice_url, sms_url, tag=tag)
        if self.die_after:
            self.die_after = False
            raise Killed
        return sid  # type: ignore[no-any-return]

    def tagged(self, tag: str) -> list[tuple[str, str]]:
        self.lookups.append(tag)
        return self.real.tagged(tag)  # type: ignore[no-any-return]

    def release(self, provider_sid: str) -> None:
        self.real.release(provider_sid)


@pytest.fixture(scope="module", autouse=True)
def managed_account(fake):
    return fake.add_account(sid=MANAGED_SID, auth_token=MANAGED_TOKEN, friendly_name="callwright managed")


@pytest.fixture
def tenant(client, container) -> Account:
    return new_tenant(client, container)


@pytest.fixture
def area_code() -> str:
    return str(next(_area_codes))


def principal_of(tenant: Account) -> Principal:
    return Principal(kind=API_KEY, tenant_id=tenant.tenant_id, user_id=tenant.user_id,
                     verification_status="approved", tier="standard", key_id=tenant.key_id)


def body(area_code: str) -> dict[str, Any]:
    return {"business_name": "Acme Dental", "business_description": DESCRIPTION, "area_code": area_code,
            "config": config_for("dental", DESCRIPTION)}


def run(container, tenant: Account, area_code: str, key: str, provisioner: Any = None) -> Any:
    """``provision`` as the route runs it (same fingerprint), with ``provisioner`` in place."""
    numbering = container.managed_numbering
    if provisioner is not None:
        numbering = dataclasses.replace(numbering, provisioner=provisioner)
    given = body(area_code)
    return provision(container.calling, numbering, principal_of(tenant), ProvisionRequest(**given),
                     render=lambda number: {"id": number.number_id, "e164": number.e164}, key=key,
                     fingerprint=body_fingerprint(given), lease=PURCHASE_LEASE)


def intent_of(container, tenant: Account, key: str) -> Provisioning:
    found = container.calling.find(Provisioning, Provisioning.create_id(tenant.tenant_id, Provisioning.key_of(key)))
    assert found is not None
    return found


def history(container, provision_: Provisioning) -> list[str]:
    return [type(event).__name__ for event in container.calling.events.get(provision_.id)]


def numbers_tagged(fake, tag: str) -> list[dict[str, Any]]:
    return [r for r in fake.market.purchased.values() if r["friendly_name"] == tag]


def purchase_requests(fake, area_code: str) -> int:
    return sum(1 for r in fake.requests_to("/IncomingPhoneNumbers.json", "POST")
               if r.form.get("PhoneNumber", [""])[0].startswith(f"+1{area_code}"))


def test_a_crash_between_the_claim_and_the_purchase_is_bought_once_by_the_retry(client, container, tenant, fake,
                                                                                 area_code):
    key = f"crash-before-{area_code}"
    faulty = FaultyProvisioner(container.managed_numbering.provisioner, die_before=True)

    with pytest.raises(Killed):
        run(container, tenant, area_code, key, faulty)

    intent = intent_of(container, tenant, key)
    assert history(container, intent) == ["Requested", "PurchaseAttempted"]  # saved before the carrier was asked
    assert purchase_requests(fake, area_code) == 0
    headers = {**tenant.headers, "Idempotency-Key": key}
    busy = client.post("/v1/wizard/provision", json=body(area_code), headers=headers)  # within the claim's lease
    assert (busy.status_code, busy.json()["error"]["code"]) == (409, "provision_in_progress")
    assert busy.headers["Retry-After"] == str(int(PURCHASE_LEASE.total_seconds()))

    container.clock.advance(PURCHASE_LEASE)
    done = client.post("/v1/wizard/provision", json=body(area_code), headers=headers)

    assert done.status_code == 200, done.text
    assert purchase_requests(fake, area_code) == 1
    assert [r["phone_number"] for r in numbers_tagged(fake, intent.tag)] == [done.json()["number"]["e164"]]
    assert history(container, intent) == ["Requested", "PurchaseAttempted", "PurchaseAttempted", "NumberBought",
                                          "Completed"]
    again = client.post("/v1/wizard/provision", json=body(area_code), headers=headers)
    assert again.json() == done.json() and again.headers.get("Idempotent-Replayed") == "true"
    assert purchase_requests(fake, area_code) == 1


def test_a_number_the_carrier_bought_before_the_crash_is_found_by_its_tag_not_bought_again(container, tenant, fake,
                                                                                         area_code):
    key = f"crash-after-{area_code}"
    faulty = FaultyProvisioner(container.managed_numbering.provisioner, die_after=True)
    with pytest.raises(Killed):
        run(container, tenant, area_code, key, faulty)
    intent = intent_of(container, tenant, key)
    [bought] = numbers_tagged(fake, intent.tag)
    assert not intent.bought  # the carrier's answer was never saved

    container.clock.advance(PURCHASE_LEASE)
    answer = run(container, tenant, area_code, key, faulty)

    assert answer.status_code == 200 and answer.body["number"]["e164"] == bought["phone_number"]
    assert faulty.lookups == [intent.tag] and purchase_requests(fake, area_code) == 1
    found = intent_of(container, tenant, key)
    assert (found.e164, found.provider_sid, found.number_id) == (bought["phone_number"], bought["sid"],
                                                                 answer.body["number"]["id"])


def test_a_purchase_the_carrier_never_answered_waits_out_the_lease_then_buys_once(container, tenant, fake, area_code):
    key = f"lost-{area_code}"
    fake.lose_purchases = True
    try:
        with pytest.raises(UpstreamUnavailableError) as lost:
            run(container, tenant, area_code, key)
    finally:
        fake.lose_purchases = False
    assert "same Idempotency-Key" in lost.value.message
    with pytest.raises(InProgressError):  # it may have been bought: nobody buys until the lease ends
        run(container, tenant, area_code, key)

    container.clock.advance(PURCHASE_LEASE)
    answer = run(container, tenant, area_code, key)

    intent = intent_of(container, tenant, key)
    assert answer.status_code == 200 and len(numbers_tagged(fake, intent.tag)) == 1
    assert purchase_requests(fake, area_code) == 2  # the lost request and the one that bought


def test_a_number_sold_meanwhile_ends_its_claim_and_the_next_one_is_bought(container, tenant, fake, area_code):
    taken = fake.market.on_sale(area_code)[0]
    other = fake.add_account(numbers=[])

    class SoldFirst(FaultyProvisioner):
        def purchase(self, e164: str, voice_url: str, sms_url: str, *, tag: str | None = None) -> str:
            if e164 == taken and not other.numbers:
                other.numbers.append((taken, "someone else"))  # sold to another account meanwhile
            return super().purchase(e164, voice_url, sms_url, tag=tag)

    answer = run(container, tenant, area_code, f"sold-{area_code}", SoldFirst(container.managed_numbering.provisioner))

    intent = intent_of(container, tenant, f"sold-{area_code}")
    assert answer.status_code == 200 and answer.body["number"]["e164"] != taken
    assert history(container, intent) == ["Requested", "PurchaseAttempted", "AttemptEnded", "PurchaseAttempted",
                                          "NumberBought", "Completed"]
