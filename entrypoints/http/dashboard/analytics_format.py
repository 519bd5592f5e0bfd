"""Words for the analytics pages' numbers, and the rows of their tables (analytics_reports.py)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

THIS, PRIOR = "this period", "prior period"


# -- words for numbers ----------------------------------------------------------------------------

def plural(count: Any, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def number(value: Any, unit: str = "") -> str:
    return "—" if value is None else f"{value}{unit}"


def dollars(value: Any) -> str:
    return "—" if value in (None, "") else f"${value}"


def change(value: Any) -> str:
    """A ``delta_pct`` figure: ``+12.5%``, ``−3.0%``; ``—`` where the API has none (prior 0)."""
    if value is None:
        return "—"
    return f"+{value}%" if value > 0 else (f"−{abs(value)}%" if value < 0 else "0.0%")


def amount(value: Any) -> float | None:
    try:
        return None if value is None else float(Decimal(str(value)))
    except InvalidOperation:
        return None


def money_axis(value: float) -> str:
    return f"${value:.2f}" if value == 0 or value >= 0.01 else f"${value:.4f}"


def bucket_label(bucket: str, interval: str | None) -> str:
    moment = datetime.fromisoformat(bucket.replace("Z", "+00:00"))
    if interval == "hour":
        return moment.strftime("%Y-%m-%d %H:00 UTC")
    return ("week of " if interval == "week" else "") + moment.strftime("%Y-%m-%d")


def bucket_tick(bucket: str, interval: str | None) -> str:
    moment = datetime.fromisoformat(bucket.replace("Z", "+00:00"))
    return moment.strftime("%d %H:00" if interval == "hour" else "%b %d")


# -- tables ---------------------------------------------------------------------------------------

def headers(first: list[str], compared: bool) -> list[str]:
    return first + ([f"Value, {THIS}", f"Value, {PRIOR}", "Change"] if compared else ["Value"])


def figure_rows(figures: list[tuple[str, str, Any]], row: dict[str, Any], before: dict[str, Any] | None,
                delta: dict[str, Any] | None) -> list[list[str]]:
    """One table row per figure: label, this period (, prior period, change)."""
    rows = []
    for label, key, show in figures:
        cells = [label, show(row.get(key))]
        if before is not None:
            cells += [show(before.get(key)), change((delta or {}).get(key))]
        rows.append(cells)
    return rows


def first_row(report: dict[str, Any] | None) -> dict[str, Any] | None:
    return report["data"][0] if report and report["data"] else None
