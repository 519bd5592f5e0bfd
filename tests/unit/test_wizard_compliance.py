"""The wizard's compliance gate and its offline generator (issue 19 item 1; docs/wizard.md): a table
of business descriptions and the verdict and class each gets; what the offline generator answers for
each verdict; and every offline configuration passing the checks a generated one must pass."""

from __future__ import annotations

import jsonschema
import pytest

from adapters.scripted.wizard import RuleBasedWizardGenerator
from application.wizard.generate import generate
from domain.wizard import compliance, config_rules
from domain.wizard.compliance import GENERAL, NEEDS_REVIEW, SUPPORTED, UNCLEAR, UNSUPPORTED
from domain.wizard.config_schema import config_json_schema
from domain.wizard.configs import LINES, config_for

TABLE: list[tuple[str, str, str]] = [
    # supported: one per business class, and a business no class names
    ("Family dental practice; patients call to book cleanings and checkups", SUPPORTED, "dental"),
    ("An orthodontist's office that wants help with appointment bookings", SUPPORTED, "dental"),
    ("Neighbourhood veterinary clinic for cats and dogs", SUPPORTED, "veterinary"),
    ("Dog grooming and pet boarding in Portland", SUPPORTED, "veterinary"),
    ("Physiotherapy clinic, sports injuries, bookings by phone", SUPPORTED, "medical_office"),
    ("Italian restaurant taking table reservations and takeout orders", SUPPORTED, "restaurant"),
    ("A small bakery and coffee shop downtown", SUPPORTED, "restaurant"),
    ("Hair salon and barber; clients book cuts and colour", SUPPORTED, "salon_spa"),
    ("Day spa offering massage and facials", SUPPORTED, "salon_spa"),
    ("Emergency plumber, 24/7 callouts for burst pipes", SUPPORTED, "home_services"),
    ("HVAC company: heating and air conditioning repairs", SUPPORTED, "home_services"),
    ("Auto repair shop: oil changes, brakes and tires", SUPPORTED, "auto_services"),
    ("Boutique hotel with twelve rooms by the beach", SUPPORTED, "hospitality"),
    ("Property management company for 300 apartments; residents report repairs", SUPPORTED, "property_management"),
    ("Yoga and pilates studio with morning classes", SUPPORTED, "fitness"),
    ("Online store selling handmade candles; customers ask where their order is", SUPPORTED, "retail_orders"),
    ("Accounting firm doing bookkeeping and tax returns for small businesses", SUPPORTED, "professional_office"),
    ("We repair bicycles and sell spare parts in a workshop by the river", SUPPORTED, GENERAL),
    ("We accept most insurance plans at our dental office", SUPPORTED, "dental"),
    # needs review: classes a person decides, and descriptions too short to tell
    ("Small law firm; callers want to talk to an attorney about their case", NEEDS_REVIEW, "legal_services"),
    ("Mortgage broker helping first-time buyers compare loans", NEEDS_REVIEW, "financial_products"),
    ("Telehealth service where a nurse line triages symptoms", NEEDS_REVIEW, "health_advice"),
    ("Pharmacy answering questions about prescriptions", NEEDS_REVIEW, "health_advice"),
    ("A local charity collecting donations for the food bank", NEEDS_REVIEW, "fundraising"),
    ("Clinic that wants to make reminder calls to every patient", NEEDS_REVIEW, "outbound_calling"),
    ("Sports betting tips line and casino promotions", NEEDS_REVIEW, "age_restricted"),
    ("Cannabis dispensary with delivery", NEEDS_REVIEW, "age_restricted"),
    ("Plumbing firm answering customers; we also follow up with people whose payments are overdue", NEEDS_REVIEW,
     "money_owed"),
    ("Customers who fell behind on their payments call to set up a plan", NEEDS_REVIEW, "money_owed"),
    ("A city council member's office answering constituents", NEEDS_REVIEW, "public_office_advocacy"),
    ("Kids' summer camp sign-ups for the coming season", NEEDS_REVIEW, "minors"),
    ("Stuff", NEEDS_REVIEW, UNCLEAR),
    ("we sell things", NEEDS_REVIEW, UNCLEAR),
    # unsupported: consent or safety we cannot hold on an inbound-only line
    ("Debt collection agency chasing past-due accounts", UNSUPPORTED, "debt_collection"),
    ("We collect unpaid debts for hospitals", UNSUPPORTED, "debt_collection"),
    ("Dental office that also calls patients to collect overdue balances", UNSUPPORTED, "debt_collection"),
    ("Landscaping company that wants the line to chase customers who haven't paid", UNSUPPORTED, "debt_collection"),
    ("Political campaign office for the mayor's re-election", UNSUPPORTED, "political_campaign"),
    ("Get out the vote hotline for voters before the election", UNSUPPORTED, "political_campaign"),
    ("Lead generation robocalls for solar panels", UNSUPPORTED, "lead_generation_robocalls"),
    ("Telemarketing agency cold calling homeowners", UNSUPPORTED, "lead_generation_robocalls"),
    ("Prerecorded messages blasted to a list of prospects", UNSUPPORTED, "lead_generation_robocalls"),
    ("A 911 dispatch line for the county", UNSUPPORTED, "emergency_services"),
    ("Private ambulance service taking emergency requests", UNSUPPORTED, "emergency_services"),
    ("Suicide prevention crisis hotline", UNSUPPORTED, "emergency_services"),
]


def test_the_table_covers_every_verdict_and_every_class():
    assert len(TABLE) >= 30
    assert {verdict for _, verdict, _ in TABLE} == {SUPPORTED, NEEDS_REVIEW, UNSUPPORTED}
    named = {category for _, _, category in TABLE}
    assert {c.name for c in compliance.ALL_CLASSES} | {GENERAL, UNCLEAR} == named


@pytest.mark.parametrize(("description", "verdict", "category"), TABLE)
def test_the_gate_gives_each_description_its_verdict_and_class(description, verdict, category):
    assessment = compliance.assess(description)
    assert (assessment.verdict, assessment.category) == (verdict, category)
    assert assessment.reason


@pytest.mark.parametrize(("description", "verdict", "category"), TABLE)
def test_the_offline_generator_configures_all_but_unsupported_use_cases(description, verdict, category):
    generated = generate(RuleBasedWizardGenerator(), description)

    assert (generated.verdict, generated.category) == (verdict, category)
    assert generated.reason == compliance.assess(description).reason
    if verdict == UNSUPPORTED:
        assert generated.config is None
    else:
        assert generated.config == config_for(category, description)
        assert config_rules.problems(generated.config) == []


def test_the_reason_of_each_gated_class_says_why():
    for gated in compliance.GATED:
        assert gated.verdict in (NEEDS_REVIEW, UNSUPPORTED)
        expected = "Needs review: " if gated.verdict == NEEDS_REVIEW else " not supported: "
        assert expected in gated.reason and len(gated.reason) > 80, gated.name


@pytest.mark.parametrize("category", sorted(LINES))
def test_each_offline_configuration_is_ready_and_passes_its_own_gate(category):
    config = config_for(category, "A business in Denver")

    assert config_rules.problems(config) == []
    assert not list(jsonschema.Draft202012Validator(config_json_schema()).iter_errors(config))
    assert config["timezone"] == "America/Denver" and config["transfer_destinations"] == []
    assert compliance.assess(config_rules.spoken_texts(config)).verdict == SUPPORTED


def test_a_generated_config_with_a_problem_is_reported_where_it_is():
    config = {**config_for("dental", ""), "hours_json": None, "routes": [], "sms_templates": [],
              "transfer_destinations": [{"label": "Desk", "e164": "+442079460958"}]}
    del config["persona"]
    found = sorted((tuple(loc), kind) for loc, _, kind, _ in config_rules.problems(config))
    assert found == [(("hours_json",), "missing"), (("persona",), "missing"), (("routes",), "extra_forbidden"),
                     (("sms_templates",), "sms_template_count"),
                     (("transfer_destinations",), "transfer_destinations_not_empty")]
