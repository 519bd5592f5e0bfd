"""A wizard provision's purchase claim (docs/decisions.md 41): one purchase request on its way at a
time, taken as lost once the lease has passed; a provision that may have bought a number never
starts again; replaying its events rebuilds it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from domain.errors import DomainError
from domain.wizard.provisioning import PURCHASE_LEASE, Provisioning, PurchaseInFlightError

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)


def requested(key: str | None = "k1") -> Provisioning:
    return Provisioning(tenant_id="ten_1", natural_key=Provisioning.key_of(key), fingerprint="f1",
                        business_name="Acme", area_code="512", config={"greeting": "Hi"}, by="key_1", at=NOW)


def test_a_keyed_provision_has_the_same_id_each_time_and_one_without_a_key_a_new_one():
    assert requested().id == requested().id == Provisioning.create_id("ten_1", "key:k1")
    assert requested(None).id != requested(None).id
    assert requested().tag == requested().public_id and requested().public_id.startswith("wzp_")


def test_a_second_claim_waits_for_the_lease_of_the_first():
    provision = requested()
    provision.claim_purchase("+15125550100", NOW)

    with pytest.raises(PurchaseInFlightError) as busy:
        provision.claim_purchase("+15125550101", NOW + timedelta(seconds=10))
    assert busy.value.retry_after == 20

    provision.claim_purchase("+15125550101", NOW + PURCHASE_LEASE)
    assert (provision.attempts, provision.attempt_e164) == (2, "+15125550101")


def test_a_refused_purchase_ends_its_claim_at_once():
    provision = requested()
    provision.claim_purchase("+15125550100", NOW)
    provision.purchase_failed("carrier_number_unavailable", NOW)
    assert provision.wait_left(NOW) == 0
    provision.claim_purchase("+15125550101", NOW)


def test_only_a_provision_certain_to_have_bought_nothing_or_done_starts_again():
    open_claim = requested()
    open_claim.claim_purchase("+15125550100", NOW)
    with pytest.raises(DomainError):
        open_claim.restart("f2", "Acme", "513", {}, "key_1", NOW)

    refused = requested()
    refused.claim_purchase("+15125550100", NOW)
    refused.purchase_failed("carrier_refused", NOW)
    refused.restart("f2", "Acme", "513", {}, "key_1", NOW)
    assert (refused.generation, refused.area_code, refused.attempts) == (2, "513", 0)
    assert refused.tag == f"{refused.public_id}.2"

    done = requested()
    done.claim_purchase("+15125550100", NOW)
    done.record_purchase("+15125550100", "PN1", found=False, at=NOW)
    done.complete("num-1", NOW)
    done.restart("f3", "Acme", "512", {}, "key_1", NOW)
    assert not done.bought and done.generation == 2


def test_replaying_the_events_rebuilds_the_provision():
    provision = requested()
    provision.claim_purchase("+15125550100", NOW)
    provision.record_purchase("+15125550100", "PN1", found=True, at=NOW)
    provision.complete("num-1", NOW)
    events = provision.collect_events()

    rebuilt = None
    for each in events:
        rebuilt = each.mutate(rebuilt)

    assert rebuilt is not None and rebuilt.__dict__ == provision.__dict__
