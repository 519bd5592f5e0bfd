"""The five reports of ``/v1/analytics`` (docs/analytics.md) as panels: a chart (charts.py), the
facts worth reading at a glance, and a table with the same numbers. Built from the API's JSON
answer only, with or without ``compare=prior`` (``{current, prior, delta_pct}``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from entrypoints.http.dashboard import charts
from entrypoints.http.dashboard.analytics_format import (
    PRIOR, THIS, amount, bucket_label, bucket_tick, change, dollars, figure_rows, first_row, headers, money_axis,
    number, plural,
)
from entrypoints.http.dashboard.charts import Series

NO_CALLS = "No calls in this period"


@dataclass
class Panel:
    report: str
    heading: str
    summary: str
    empty: str | None = None
    charts: list[Markup] = field(default_factory=list)
    legend: Markup | None = None
    notes: list[str] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def split(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]:
    """(current, prior, delta_pct) of an answer; the last two None without ``compare=prior``."""
    if "current" in body:
        return body["current"], body["prior"], body["delta_pct"]
    return body, None, None


# -- the reports ----------------------------------------------------------------------------------

def volume(body: dict[str, Any]) -> Panel:
    current, prior, delta = split(body)
    panel = Panel("volume-by-status", "Volume by status", "Finished calls per bucket, completed and failed.")
    interval = current["interval"]
    buckets = list(dict.fromkeys(row["bucket"] for row in current["data"]))
    before = list(dict.fromkeys(row["bucket"] for row in prior["data"])) if prior else []
    statuses = list(dict.fromkeys(row["status"] for row in current["data"]))
    calls = {(row["bucket"], row["status"]): row["calls"] for row in current["data"]}
    prior_calls = {(row["bucket"], row["status"]): row["calls"] for row in (prior or {"data": []})["data"]}
    total = sum(calls.values())
    panel.facts = [("Calls", str(total))] + ([(f"Calls, {PRIOR}", str(sum(prior_calls.values())))] if prior else [])
    series = []
    for tone, status in enumerate(statuses):
        values = [calls.get((b, status), 0) for b in buckets]
        series.append(Series(status.capitalize(), values, [
            f"{bucket_label(b, interval)}, {status}, {THIS}: {plural(v, 'call')}" for b, v in zip(buckets, values)],
            tone=tone))
        if prior:
            matched = [before[i] if i < len(before) else None for i in range(len(buckets))]
            old = [prior_calls.get((b, status), 0) if b else None for b in matched]
            series.append(Series(f"{status.capitalize()}, {PRIOR}", old, [
                f"{bucket_label(b, interval) if b else '—'}, {status}, {PRIOR}: {plural(v, 'call')}"
                for b, v in zip(matched, old)], tone=tone, prior=True))
    if total == 0:
        panel.empty = NO_CALLS
    else:
        panel.charts.append(charts.columns(
            "chart-volume-by-status", f"Calls per {interval} by status",
            f"A column per {interval} ({len(buckets)} in all), its statuses stacked; {total} calls in all.",
            [bucket_tick(b, interval) for b in buckets], series, lambda v: f"{v:g}"))
        panel.legend = charts.legend("chart-volume-by-status", series)
    panel.headers = [f"Bucket ({interval})", "Status", f"Calls, {THIS}"] + (
        [f"Bucket, {PRIOR}", f"Calls, {PRIOR}", "Change"] if prior else [])
    for index, row in enumerate(current["data"]):
        cells = [bucket_label(row["bucket"], interval), row["status"], str(row["calls"])]
        if prior is not None and delta is not None:
            place = buckets.index(row["bucket"])
            old_bucket = before[place] if place < len(before) else None
            cells += [bucket_label(old_bucket, interval) if old_bucket else "—",
                      number(prior_calls.get((old_bucket, row["status"]))) if old_bucket else "—",
                      change(delta["data"][index].get("calls"))]
        panel.rows.append(cells)
    return panel


PERCENTILES = ("p50", "p90", "p95", "p99")


def _percentile_chart(chart_id: str, title: str, key: str, unit: str, row: dict[str, Any],
                      before: dict[str, Any] | None, what: str) -> tuple[Markup, Markup | None] | None:
    def make(data: dict[str, Any], prior: bool) -> Series:
        values = [data.get(f"{key}_{p}") for p in PERCENTILES]
        period = PRIOR if prior else THIS
        return Series(PRIOR.capitalize() if prior else THIS.capitalize(), values,
                      [f"{p} {what}, {period}: {number(v, unit)}" for p, v in zip(PERCENTILES, values)],
                      [number(v, unit) for v in values], prior=prior)

    series = [make(row, False)] + ([make(before, True)] if before is not None else [])
    if all(v is None for s in series for v in s.values):
        return None
    chart = charts.bars(chart_id, title, f"{what.capitalize()} at the 50th, 90th, 95th and 99th percentile.",
                        PERCENTILES, series, lambda v: f"{v:g}{unit}", whole=False)
    return chart, (charts.legend(chart_id, series) if before is not None else None)


def latency(body: dict[str, Any]) -> Panel:
    current, prior, delta = split(body)
    panel = Panel("latency-percentiles", "Latency percentiles",
                  "Exact percentiles of call duration and of the time to the agent's first words.")
    row, before = first_row(current) or {}, first_row(prior)
    figures = [("Calls", "calls", number), ("Calls with a duration", "duration_calls", number),
               *((f"Duration {p}", f"duration_seconds_{p}", lambda v: number(v, " s")) for p in PERCENTILES),
               ("Calls with first agent audio", "first_audio_calls", number),
               *((f"First agent audio {p}", f"first_audio_ms_{p}", lambda v: number(v, " ms")) for p in PERCENTILES)]
    panel.headers = headers(["Figure"], before is not None)
    panel.rows = figure_rows(figures, row, before, first_row(delta))
    panel.facts = [("Calls", number(row.get("calls"))), ("With a duration", number(row.get("duration_calls"))),
                   ("With first agent audio", number(row.get("first_audio_calls")))]
    if not row.get("calls"):
        panel.empty = NO_CALLS
        return panel
    duration = _percentile_chart("chart-latency-percentiles", "Call duration percentiles (seconds)",
                                 "duration_seconds", " s", row, before, "call duration")
    audio = _percentile_chart("chart-latency-first-audio", "Time to first agent audio percentiles (ms)",
                              "first_audio_ms", " ms", row, before, "time to first agent audio")
    if duration:
        panel.charts.append(duration[0])
        panel.legend = duration[1]
    else:
        panel.notes.append("No call in this period connected, so there is no duration to show.")
    if audio:
        panel.charts.append(audio[0])
        panel.legend = panel.legend or audio[1]
    else:
        panel.notes.append("Time to first agent audio is measured on live calls only; this period has none.")
    return panel


COSTS = (("Voice", "cost_voice"), ("Extraction", "cost_extraction"), ("Total", "cost_total"))


def cost(body: dict[str, Any]) -> Panel:
    current, prior, delta = split(body)
    panel = Panel("cost-breakdown", "Cost breakdown", "What the period's calls cost: voice, extraction and total.")
    row, before = first_row(current) or {}, first_row(prior)
    figures = [("Calls", "calls", number), *((f"{name} cost", key, dollars) for name, key in COSTS),
               *((f"{name} cost per call", f"mean_{key}", dollars) for name, key in COSTS)]
    panel.headers = headers(["Figure"], before is not None)
    panel.rows = figure_rows(figures, row, before, first_row(delta))
    panel.facts = [("Total cost", dollars(row.get("cost_total"))),
                   ("Per call", dollars(row.get("mean_cost_total")))]
    if not row.get("calls"):
        panel.empty = NO_CALLS
        return panel

    def make(data: dict[str, Any], prior: bool) -> Series:
        period = PRIOR if prior else THIS
        return Series(period.capitalize(), [amount(data.get(key)) for _, key in COSTS],
                      [f"{name} cost, {period}: {dollars(data.get(key))}" for name, key in COSTS],
                      [dollars(data.get(key)) for _, key in COSTS], prior=prior)

    series = [make(row, False)] + ([make(before, True)] if before is not None else [])
    panel.charts.append(charts.bars("chart-cost-breakdown", "Cost by part (US dollars)",
                                    "The sums of voice, extraction and total cost of the period's calls.",
                                    [name for name, _ in COSTS], series, money_axis, whole=False))
    panel.legend = charts.legend("chart-cost-breakdown", series) if before is not None else None
    return panel


def failures(body: dict[str, Any], total: int | None) -> Panel:
    current, prior, delta = split(body)
    panel = Panel("top-failures", "Top failures",
                  "Failed calls by error code (the 8 most frequent, the rest as Other).")
    rows = current["data"]
    old = {row["error_code"]: row for row in (prior or {"data": []})["data"]}
    failed = sum(row["failures"] for row in rows)
    panel.facts = [("Failed calls", str(failed))]
    panel.headers = ["Error code", f"Failures, {THIS}", f"Share of calls, {THIS}"] + (
        [f"Failures, {PRIOR}", "Change"] if prior else [])
    for index, row in enumerate(rows):
        cells = [str(row["error_code"]), str(row["failures"]), number(row["share_pct"], "%")]
        if prior is not None and delta is not None:
            cells += [number(old.get(row["error_code"], {}).get("failures")), change(delta["data"][index]["failures"])]
        panel.rows.append(cells)
    if failed == 0:
        calls = rows[0]["calls"] if rows else total
        panel.empty = NO_CALLS if not calls else "No failed calls in this period"
        return panel
    codes = [str(row["error_code"]) for row in rows]
    series = [Series(THIS.capitalize(), [row["failures"] for row in rows], [
        f"{row['error_code']}, {THIS}: {plural(row['failures'], 'failure')} of {plural(row['calls'], 'call')}"
        f" ({number(row['share_pct'], '%')})" for row in rows], [str(row["failures"]) for row in rows])]
    if prior is not None:
        values = [old.get(code, {}).get("failures", 0) for code in codes]
        series.append(Series(PRIOR.capitalize(), values, [
            f"{code}, {PRIOR}: {plural(v, 'failure')}" for code, v in zip(codes, values)],
            [str(v) for v in values], prior=True))
    panel.charts.append(charts.bars("chart-top-failures", "Failures by error code",
                                    f"{failed} failed calls across {len(codes)} error codes.", codes, series,
                                    lambda v: f"{v:g}"))
    panel.legend = charts.legend("chart-top-failures", series) if prior is not None else None
    return panel


BINS = [f"{k / 10:.1f}–{(k + 1) / 10:.1f}" for k in range(10)]


def quality(body: dict[str, Any]) -> Panel:
    current, prior, delta = split(body)
    panel = Panel("outcome-quality", "Outcome quality",
                  "How often calls complete, and how confident the extracted outcomes are.")
    row, before = first_row(current) or {}, first_row(prior)
    figures = [("Calls", "calls", number), ("Completed", "completed", number),
               ("Completion rate", "completion_pct", lambda v: number(v, "%")),
               ("Calls with a confidence", "confidence_calls", number), ("Mean confidence", "confidence_mean", number),
               ("Optional fields", "optional_fields", number), ("Optional fields filled", "optional_filled", number),
               ("Optional fields filled (share)", "optional_filled_pct", lambda v: number(v, "%")),
               ("Extraction failures", "extraction_failures", number)]
    panel.headers = headers(["Figure"], before is not None)
    hist = {f"confidence_{k}": v for k, v in enumerate(row.get("confidence_histogram") or [])}
    old = {f"confidence_{k}": v for k, v in enumerate((before or {}).get("confidence_histogram") or [])}
    moved = {f"confidence_{k}": v for k, v in enumerate((first_row(delta) or {}).get("confidence_histogram") or [])}
    panel.rows = figure_rows(figures, row, before, first_row(delta)) + figure_rows(
        [(f"Confidence {name}", f"confidence_{k}", number) for k, name in enumerate(BINS)], hist,
        old if before is not None else None, moved)
    panel.facts = [("Completion rate", number(row.get("completion_pct"), "%")),
                   ("Mean confidence", number(row.get("confidence_mean"))),
                   ("Optional fields filled", number(row.get("optional_filled_pct"), "%")),
                   ("Extraction failures", number(row.get("extraction_failures")))]
    if not row.get("calls"):
        panel.empty = NO_CALLS
        return panel
    if not row.get("confidence_calls"):
        panel.notes.append("No completed call in this period has a confidence to show.")
        return panel

    def make(data: dict[str, Any], prior: bool) -> Series:
        counts = list(data.get("confidence_histogram") or [0] * 10)
        period = PRIOR if prior else THIS
        return Series(period.capitalize(), counts, [
            f"Confidence {name}, {period}: {plural(v, 'call')}" for name, v in zip(BINS, counts)],
            [str(v) for v in counts], prior=prior)

    series = [make(row, False)] + ([make(before, True)] if before is not None else [])
    panel.charts.append(charts.bars("chart-outcome-quality", "Completed calls by outcome confidence",
                                    f"A histogram of the confidence of {row['confidence_calls']} completed calls, "
                                    "in tenths from 0 to 1.", BINS, series, lambda v: f"{v:g}"))
    panel.legend = charts.legend("chart-outcome-quality", series) if before is not None else None
    return panel
