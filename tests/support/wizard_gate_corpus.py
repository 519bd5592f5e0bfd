"""The wizard's gate corpus (``tests/fixtures/wizard_gate_corpus.json``): business descriptions in
the words businesses use, each with the verdict the compliance gate must give it (docs/wizard.md).
Read by the offline tests and by the Anthropic path's, so both run the same descriptions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CORPUS_PATH = Path(__file__).parents[1] / "fixtures" / "wizard_gate_corpus.json"
RISKY = ("debt_collection", "overdue_payments", "political", "health", "lending", "telemarketing", "robocall",
         "minors")
CATEGORIES = (*RISKY, "appointment_reminders", "ordinary")


@dataclass(frozen=True)
class Entry:
    description: str
    verdict: str
    category: str  # what the description is about (the corpus's own grouping, not the gate's class)


def raw_corpus() -> list[dict[str, str]]:
    return json.loads(CORPUS_PATH.read_text(encoding="utf-8"))


def load_corpus() -> list[Entry]:
    return [Entry(**entry) for entry in raw_corpus()]


def entry_id(entry: Entry) -> str:
    return f"{entry.category}:{entry.description[:48]}"


CORPUS = load_corpus()
