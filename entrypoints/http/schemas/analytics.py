"""Answers of ``/v1/analytics/*`` (docs/analytics.md), for the OpenAPI document: per report its
row, the report, its ``delta_pct`` mirror and the ``compare=prior`` wrapper.

A row's labels are ``bucket`` (series) and the ``group_by`` dimension, named after it, with the
report's own breakdown; the others are absent. The rows are built as plain data (projections.
call_facts.reports); these types only describe them.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from domain.analytics.reports import COST, FAILURES, GROUP_BY, LATENCY, QUALITY, VOLUME
from projections.call_facts.compare import FIGURES, LABELS, LIST_FIGURES, MONEY

_INTEGERS = {"calls", "failures", "completed", "duration_calls", "first_audio_calls", "confidence_calls",
             "optional_fields", "optional_filled", "extraction_failures"}


def _type(name: str, delta: bool) -> Any:
    if name in LABELS:
        return str | None
    if delta:
        return list[float | None] if name in LIST_FIGURES else float | None
    if name in LIST_FIGURES:
        return list[int]
    if name in MONEY:
        return str | None
    return int if name in _INTEGERS else float | None


def _row(title: str, report: str, delta: bool) -> type[msgspec.Struct]:
    labels = [("bucket", str | UnsetType, UNSET)] + [(dim, str | None | UnsetType, UNSET) for dim in GROUP_BY
                                                      if dim not in FIGURES[report]]
    figures = [(name, _type(name, delta)) for name in FIGURES[report]]
    return msgspec.defstruct(title, [*figures, *labels], kw_only=True)


def _answer(title: str, row: type[msgspec.Struct]) -> type[msgspec.Struct]:
    return msgspec.defstruct(title, [
        ("report", str), ("start", str), ("end", str), ("interval", str | None), ("group_by", str | None),
        ("filters", dict[str, str]), ("data", list[row]),  # type: ignore[valid-type]
    ], kw_only=True)


def _types(report: str, stem: str) -> tuple[Any, Any]:
    answer = _answer(f"{stem}Report", _row(f"{stem}Row", report, False))
    delta = _answer(f"{stem}Delta", _row(f"{stem}DeltaRow", report, True))
    comparison = msgspec.defstruct(f"{stem}Comparison", [("current", answer), ("prior", answer), ("delta_pct", delta)],
                                   kw_only=True)
    return answer, comparison


VolumeReport, VolumeComparison = _types(VOLUME, "VolumeByStatus")
LatencyReport, LatencyComparison = _types(LATENCY, "LatencyPercentiles")
CostReport, CostComparison = _types(COST, "CostBreakdown")
FailuresReport, FailuresComparison = _types(FAILURES, "TopFailures")
QualityReport, QualityComparison = _types(QUALITY, "OutcomeQuality")
