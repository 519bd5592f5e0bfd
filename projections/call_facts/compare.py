"""``compare=prior`` (SPEC.md Versioning §2) and the reports' CSV.

``delta_pct`` mirrors the current report: labels as they are, each figure replaced by
``(current - prior) / prior × 100`` rounded to 0.1, null where the prior is 0 or either is null.
Rows line up by their labels, a bucket by its place in the window (the first day of this week
against the first day of the last). Money is a decimal string in the reports and counts as a
figure here.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from domain.analytics.reports import COST, FAILURES, GROUP_BY, LATENCY, QUALITY, VOLUME, ReportQuery
from projections.call_facts.reports import CONFIDENCE_SUMS, PERCENTILES, Report

LABELS = frozenset({"bucket", *GROUP_BY})
MONEY = frozenset({"cost_voice", "cost_extraction", "cost_total",
                   "mean_cost_voice", "mean_cost_extraction", "mean_cost_total"})


def _figure(name: str, value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if name in MONEY and isinstance(value, str):
        return float(Decimal(value))
    return float(value) if isinstance(value, (int, float)) else None


def change(name: str, current: Any, prior: Any) -> Any:
    """The delta of one figure (a list: of each of its items)."""
    if isinstance(current, list):
        prior = prior if isinstance(prior, list) else []
        return [change(name, item, prior[i] if i < len(prior) else None) for i, item in enumerate(current)]
    now, before = _figure(name, current), _figure(name, prior)
    if now is None or not before:
        return None
    return round((now - before) * 100 / before, 1)


def _key(row: dict[str, Any], report: Report) -> tuple[Any, ...]:
    labels = tuple((name, row[name]) for name in row if name in LABELS and name != "bucket")
    return (report.buckets.index(row["bucket"]) if "bucket" in row else None, labels)


def matched(current: Report, prior: Report) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each row of the current report with its prior counterpart (None: no such row)."""
    rows = {_key(row, prior): row for row in prior.body["data"]}
    return [(row, rows.get(_key(row, current))) for row in current.body["data"]]


def delta(current: Report, prior: Report) -> dict[str, Any]:
    rows = [{name: value if name in LABELS else change(name, value, (before or {}).get(name))
             for name, value in row.items()} for row, before in matched(current, prior)]
    return {**current.body, "data": rows}


def compared(current: Report, prior: Report | None) -> dict[str, Any]:
    """The answer: the report as it is, or ``{current, prior, delta_pct}``."""
    if prior is None:
        return current.body
    return {"current": current.body, "prior": prior.body, "delta_pct": delta(current, prior)}


LIST_FIGURES = frozenset({"confidence_histogram"})  # one CSV column per item: name_0, name_1, ...
# Each report's row fields after its labels, in order (a list field is one entry here).
FIGURES = {
    VOLUME: ["status", "calls"],
    LATENCY: ["calls", "duration_calls", *(f"duration_seconds_p{p}" for p in PERCENTILES), "first_audio_calls",
              *(f"first_audio_ms_p{p}" for p in PERCENTILES)],
    COST: ["calls", "cost_voice", "cost_extraction", "cost_total", "mean_cost_voice", "mean_cost_extraction",
           "mean_cost_total"],
    FAILURES: ["error_code", "failures", "calls", "share_pct"],
    QUALITY: ["calls", "completed", "completion_pct", "confidence_calls", "confidence_mean",
              "confidence_histogram", "optional_fields",
              "optional_filled", "optional_filled_pct", "extraction_failures"],
}


def columns(query: ReportQuery) -> list[str]:
    """The CSV columns of a report (its JSON rows' fields, a list one column per item)."""
    labels = ["bucket"] * bool(query.interval) + [query.group_by] * bool(query.group_by)
    flat: list[str] = []
    for name in FIGURES[query.report]:
        flat += [f"{name}_{k}" for k in range(len(CONFIDENCE_SUMS))] if name in LIST_FIGURES else [name]
    return [*labels, *flat]


# -- CSV ------------------------------------------------------------------------------------------

class _Line:
    def write(self, text: str) -> str:
        return text


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A list figure (the confidence histogram) as one column per item: ``name_0``, ``name_1``..."""
    flat: dict[str, Any] = {}
    for name, value in row.items():
        if isinstance(value, list):
            flat.update({f"{name}_{i}": item for i, item in enumerate(value)})
        else:
            flat[name] = value
    return flat


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value  # labels are validated values (ids, codes, ISO times), figures numbers or decimals


def csv_lines(columns: list[str], current: Report, prior: Report | None) -> Iterator[str]:
    """The report's rows as RFC 4180 lines, header first; with a prior report, each figure column
    is followed, after all of them, by ``prior_<col>`` and ``delta_pct_<col>``."""
    writer = csv.writer(_Line(), lineterminator="\r\n")
    figures = [name for name in columns if name not in LABELS]
    extra = [f"{kind}_{name}" for name in figures for kind in ("prior", "delta_pct")] if prior is not None else []
    yield writer.writerow([*columns, *extra])
    pairs = matched(current, prior) if prior is not None else [(row, None) for row in current.body["data"]]
    for row, before in pairs:
        now = _flat(row)
        cells = [_cell(now.get(name)) for name in columns]
        if prior is not None:
            then = _flat(before or {})
            for name in figures:
                cells += [_cell(then.get(name)), change(name, now.get(name), then.get(name))]
        yield writer.writerow(cells)
