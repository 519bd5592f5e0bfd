"""Every configuration of the offline wizard is one ``PATCH /v1/numbers/{id}`` accepts unchanged
(issue 19 item 1): generated over HTTP for a description of each business class, then sent as it
is to the real route on a real number, which then shows it."""

from __future__ import annotations

from typing import Any

import pytest

from domain.wizard.compliance import GENERAL
from domain.wizard.configs import LINES, config_for
from tests.support.setup import Account, carrier_tenant
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

LINE = "+14155550177"
DESCRIPTIONS = {
    "veterinary": "A veterinary practice in Seattle for cats and dogs",
    "dental": "Family dentist in Boston; patients book cleanings",
    "medical_office": "Chiropractic clinic in Phoenix, appointments by phone",
    "restaurant": "Pizzeria in Chicago taking table reservations",
    "salon_spa": "Hair salon and nail bar in Miami",
    "home_services": "Plumbing and heating repairs around Denver",
    "auto_services": "Auto repair shop doing brakes and tires in Dallas",
    "hospitality": "A bed and breakfast in Vermont with six rooms",
    "property_management": "Property management for apartments in Atlanta",
    "fitness": "A yoga and pilates studio in Austin",
    "retail_orders": "Online store for handmade soap; customers track their orders",
    "professional_office": "An accounting firm doing tax returns in London",
    GENERAL: "We restore antique clocks and watches for collectors around town",
}
SHOWN_AS_GIVEN = ("greeting", "persona", "objective", "timezone", "hours_json", "overflow_action", "voicemail_mode",
                  "voicemail_persona", "sms_enabled", "transfer_destinations")


@pytest.fixture(scope="module")
def owner(client, container, fake) -> tuple[Account, dict[str, Any]]:
    tenant = carrier_tenant(client, container, fake, [(LINE, "Main line")], select=False)[0]
    created = client.post("/v1/numbers/byo", json={"e164": LINE}, headers=tenant.headers)
    assert created.status_code == 201, created.text
    return tenant, created.json()


def test_every_class_has_a_description():
    assert set(DESCRIPTIONS) == set(LINES)


@pytest.mark.parametrize("category", sorted(LINES))
def test_each_offline_config_is_accepted_by_patch_as_it_is(client, owner, category):
    tenant, number = owner
    generated = client.post("/v1/wizard/generate", json={"business_description": DESCRIPTIONS[category]},
                            headers=tenant.headers)
    assert generated.status_code == 200, generated.text
    body = generated.json()
    assert body["verdict"] == "supported", body["reason"]
    config = body["config"]
    assert config == config_for(category, DESCRIPTIONS[category])  # the class the description names

    changed = client.patch(f"/v1/numbers/{number['id']}", json=config, headers=tenant.headers)

    assert changed.status_code == 200, changed.text
    shown = client.get(f"/v1/numbers/{number['id']}", headers=tenant.headers).json()
    assert {name: shown[name] for name in SHOWN_AS_GIVEN} == {name: config[name] for name in SHOWN_AS_GIVEN}
    assert list(shown["outcome_schema"]) == list(config["outcome_schema"])
    assert [(t["name"], t["body"], t["condition"]) for t in shown["sms_templates"]] == [
        (t["name"], t["body"], t["condition"]) for t in config["sms_templates"]]
