"""The wizard's compliance gate reads paraphrases (docs/wizard.md): a corpus of business descriptions
(``tests/fixtures/wizard_gate_corpus.json``), each with the verdict it must get, written in the
words businesses use rather than the gate's keywords. Every entry gets exactly its verdict offline;
a risky one is never ``supported``; an ordinary business is never flagged."""

from __future__ import annotations

from collections import Counter

import pytest

from adapters.scripted.wizard import RuleBasedWizardGenerator
from application.wizard.generate import generate
from domain.wizard import compliance
from domain.wizard.compliance import NEEDS_REVIEW, SUPPORTED, UNSUPPORTED
from tests.support.wizard_gate_corpus import CATEGORIES, CORPUS, RISKY, entry_id, raw_corpus


def test_the_corpus_covers_every_risk_with_varied_descriptions():
    assert all(set(entry) == {"description", "verdict", "category"} for entry in raw_corpus())
    assert len(CORPUS) >= 60 and len({entry.description for entry in CORPUS}) == len(CORPUS)
    assert {entry.verdict for entry in CORPUS} == {SUPPORTED, NEEDS_REVIEW, UNSUPPORTED}
    per_category = Counter(entry.category for entry in CORPUS)
    assert set(per_category) == set(CATEGORIES)
    assert all(per_category[category] >= 6 for category in CATEGORIES), per_category
    assert all(entry.verdict != SUPPORTED for entry in CORPUS if entry.category in RISKY)
    assert all(entry.verdict == SUPPORTED for entry in CORPUS if entry.category == "ordinary")


@pytest.mark.parametrize("entry", CORPUS, ids=entry_id)
def test_each_corpus_description_gets_its_verdict_offline(entry):
    assessment = compliance.assess(entry.description)

    assert assessment.verdict == entry.verdict, f"{assessment.category}: {entry.description}"
    generated = generate(RuleBasedWizardGenerator(), entry.description)
    assert (generated.verdict, generated.category) == (assessment.verdict, assessment.category)
    assert (generated.config is None) == (entry.verdict == UNSUPPORTED)


def test_no_risky_description_is_supported_and_no_ordinary_one_is_flagged():
    risky_supported = [e.description for e in CORPUS
                       if e.category in RISKY and compliance.assess(e.description).verdict == SUPPORTED]
    false_alarms = [e.description for e in CORPUS
                    if e.verdict == SUPPORTED and compliance.assess(e.description).verdict != SUPPORTED]
    assert (risky_supported, false_alarms) == ([], [])


def test_appointment_reminders_are_scheduling_not_health_but_placing_them_is_outbound():
    # A reminder says when and where, not what to do about one's health: a clinic whose patients
    # answer their reminders is its business class; a clinic that has reminders phoned out is
    # outbound calling (needs review, as for a salon), never health advice.
    for entry in (e for e in CORPUS if e.category == "appointment_reminders"):
        assessment = compliance.assess(entry.description)
        expected = {SUPPORTED: ("dental", "medical_office"), NEEDS_REVIEW: ("outbound_calling",)}[entry.verdict]
        assert assessment.category in expected, entry.description


@pytest.mark.parametrize(("text", "expected"), [
    ("Kids' summer-camp sign-ups", "kids summer camp sign ups"),
    ("Customers who haven\u2019t paid; 10,000 calls!", "customers who havent paid . 10000 calls ."),
    ("Dr. O'Neil \u2014 B&B,  caf\u00e9\n24/7", "dr . oneil b&b . caf\u00e9 . 24 7"),
])
def test_the_gate_reads_descriptions_in_plain_words(text, expected):
    assert compliance.plain(text) == expected


@pytest.mark.parametrize(("description", "category"), [
    ("we collect on late invoices", "debt_collection"),
    ("WE COLLECT ON LATE INVOICES!!!", "debt_collection"),
    ("We're collecting on late-invoices", "debt_collection"),
    ("Invoices that are 60 days past due and we collect on them", "debt_collection"),
    ("Invoices that are 60 days past due. We collect on them", "money_owed"),  # each clause alone: money owed
    ("Members whose dues are three months overdue", "money_owed"),
    ("Overdue. Our dues are reasonable and we collect feedback", "general"),  # two clauses, no money owed
])
def test_word_forms_and_clauses_do_not_change_a_verdict(description, category):
    assert compliance.assess(description).category == category


def test_the_strictest_class_still_wins_over_paraphrases():
    assert compliance.assess("Pediatric dental office; we chase parents who haven't paid").verdict == UNSUPPORTED
    assert compliance.assess("A family restaurant that wants the line to remind diners of unpaid tabs").verdict \
        == NEEDS_REVIEW
