"""One table of every benchmark's headline figures: each script records its ratios with their
targets, and ``bench/results/summary.md`` (git-ignored) is rewritten from all the records so far.

    from summary import record
    record("calls_create.py", "POST /v1/calls / durable ceiling (all-in-one)", 0.31, ">= 0.25", met=True)

Records are kept in ``bench/results/summary.json`` by (script, figure), the latest run winning, so a
``make bench`` run leaves one row per figure whatever order the scripts ran in.
"""

from __future__ import annotations

import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
RECORDS = RESULTS / "summary.json"
TABLE = RESULTS / "summary.md"


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def record(script: str, figure: str, value: float | None, target: str, *, met: bool | None, note: str = "") -> None:
    """Keep one figure (a ratio, or a latency in ms) with its target and whether it was met."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    rows = json.loads(RECORDS.read_text()) if RECORDS.exists() else []
    rows = [row for row in rows if (row["script"], row["figure"]) != (script, figure)]
    rows.append({"script": script, "figure": figure, "value": value, "target": target, "met": met, "note": note,
                 "at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
    RECORDS.write_text(json.dumps(rows, indent=1))
    TABLE.write_text(render(rows))


def render(rows: list[dict]) -> str:
    lines = [f"# Benchmark summary\n\nMachine: {machine()}\n",
             "| script | figure | value | target | met | note |", "|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r["script"], r["figure"])):
        value = "" if row["value"] is None else f"{row['value']:.3g}"
        met = {True: "met", False: "missed", None: "n/a"}[row["met"]]
        lines.append(f"| {row['script']} | {row['figure']} | {value} | {row['target']} | {met} | {row['note']} |")
    return "\n".join(lines) + "\n"
