"""How long a database outage costs the service, against how long the database itself was away
(ARCHITECTURE.md §11; issue 13's targets G-PG-1 and G-PG-2).

One ``callwright serve`` on a temporary data directory, a steady load of keyed ``POST /v1/calls``
from 4 clients and ``/readyz`` probed every 250 ms (the fault tests' own load, tests/faults), and
three faults injected into its embedded PostgreSQL in turn:

- ``terminate``: ``pg_terminate_backend`` of every backend (G-PG-1: service back ≤ 5 s);
- ``restart``: ``pg_ctl restart -m immediate`` (G-PG-2: window ≤ 30 s, read models ≤ 10 s after);
- ``stop20``: ``pg_ctl stop -m fast``, 20 s away, ``pg_ctl start``.

For each it prints the database's own window (from the fault to its first accepted connection,
the ceiling: the service cannot be back before it), the service's window (from the fault to the
first create after which every create succeeds), their difference (the service's own delay),
what the clients were answered meanwhile, the slowest create and readiness answers, and how long
the calls list took to show every acknowledged call once the service was back.

Run: ``.venv/bin/python bench/database_outage.py`` (about 90 s; loopback only).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.service import ServeProcess, approved_key, bearer, offline_server  # noqa: E402
from tests.faults.load import Load, rows  # noqa: E402
from tests.faults.postgres_control import EmbeddedCluster  # noqa: E402
from tests.support.readme import first_call_body  # noqa: E402

TARGETS = {"terminate": ("resume_s", 5.0), "restart": ("window_s", 30.0), "stop20": ("resume_s", 5.0)}
CONVERGE_TARGET = 10.0


def database_back(cluster: EmbeddedCluster, since: float, timeout: float = 60.0) -> float:
    """When the database first accepted a connection after ``since`` (monotonic)."""
    deadline = since + timeout
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(cluster.conninfo(), connect_timeout=1, autocommit=True) as conn:
                conn.execute("SELECT 1")
            return time.monotonic()
        except psycopg.OperationalError:
            time.sleep(0.02)
    raise SystemExit("the database did not come back")


def listed(server: ServeProcess, headers: dict[str, str]) -> set[str]:
    with server.client() as http:
        try:
            return {row["call_id"] for row in rows(http, "/v1/calls", headers)}
        except AssertionError:  # a page refused: not there yet
            return set()


def inject(kind: str, cluster: EmbeddedCluster) -> tuple[float, float]:
    """The fault; (when it began, when the database accepted a connection again)."""
    began = time.monotonic()
    if kind == "terminate":
        cluster.terminate_backends()
        return began, began
    if kind == "restart":
        cluster.stop("immediate")
        cluster.start()
    else:
        cluster.stop("fast")
        time.sleep(20.0)
        cluster.start()
    return began, database_back(cluster, began)


def trial(kind: str) -> dict[str, Any]:
    with offline_server(f"callwright-bench-{kind}-", rate_limit_tiers='{"standard": 1000000}') as server:
        headers = bearer(approved_key(server, "bench@example.com"))
        cluster = EmbeddedCluster(server.data_dir)
        load = Load(server.base_url, headers, first_call_body()).start()
        try:
            time.sleep(2.0)
            began, db_back = inject(kind, cluster)
            time.sleep(8.0)
        finally:
            load.stop()
        answers = sorted(load.answers, key=lambda a: a.at)
        during = [a for a in answers if a.at >= began]
        failing = [a for a in during if a.status != 201]
        # Back: the first create answered 201 among those sent after the last one that failed
        # (requests that waited for a connection while the database returned count as back then).
        since = failing[-1].at if failing else began
        back = min((a.at + a.seconds for a in during if a.status == 201 and a.at >= since), default=since)
        accepted = {a.call_id for a in answers if a.status == 201}
        started = time.monotonic()
        while not accepted <= listed(server, headers) and time.monotonic() - started < 60:
            time.sleep(0.2)
        converged = time.monotonic() - started
        statuses = Counter(f"{a.status} {a.code or ''}".strip() for a in during)
        return {
            "fault": kind,
            "db_window_s": round(db_back - began, 2),
            "window_s": round(back - began, 2),
            "resume_s": round(max(0.0, back - db_back), 2),
            "answers": dict(statuses),
            "retry_after_on_every_503": all(a.retry_after for a in during if a.status == 503),
            "slowest_create_s": round(max((a.seconds for a in during), default=0.0), 2),
            "slowest_readyz_s": round(max((a.seconds for a in load.readiness if a.at >= began), default=0.0), 2),
            "list_converged_s": round(converged, 2),
            "accepted": len(accepted),
        }


def main() -> int:
    results = [trial(kind) for kind in ("terminate", "restart", "stop20")]
    print(f"{'fault':<10} {'db s':>6} {'svc s':>6} {'resume s':>8} {'max create s':>12} {'max readyz s':>12} "
          f"{'list s':>7}  answers during the fault")
    for r in results:
        print(f"{r['fault']:<10} {r['db_window_s']:>6} {r['window_s']:>6} {r['resume_s']:>8} "
              f"{r['slowest_create_s']:>12} {r['slowest_readyz_s']:>12} {r['list_converged_s']:>7}  "
              f"{json.dumps(r['answers'])}")
    print()
    ok = True
    for r in results:
        name, target = TARGETS[r["fault"]]
        hit = r[name] <= target and r["list_converged_s"] <= CONVERGE_TARGET and r["slowest_readyz_s"] < 1.0
        ok &= hit
        ratio = r["window_s"] / r["db_window_s"] if r["db_window_s"] else float("nan")
        print(f"result {r['fault']}: {name} {r[name]} s (target ≤ {target:g}); service window / database window "
              f"= {ratio:.2f}; calls list complete {r['list_converged_s']} s after (target ≤ {CONVERGE_TARGET:g}); "
              f"/readyz max {r['slowest_readyz_s']} s (target < 1); Retry-After on every 503: "
              f"{r['retry_after_on_every_503']} {'' if hit else ' <- MISSED'}")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "database_outage.json").write_text(json.dumps(results, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
