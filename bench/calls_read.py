"""The authenticated read: ``GET /v1/calls/{id}`` and ``GET /v1/calls?limit=25`` as fractions of a bare
Litestar GET, in the same run (issue 20, item 2; ARCHITECTURE.md §11).

Both servers run behind the same stack (granian, ASGI, one worker) and take the same load as in
``audit_events_throughput.py``, whose helpers this script reuses. A ``py-spy record`` of the granian
worker during extra reads by id (never a measured window) shows the top frames.
Run: ``.venv/bin/python bench/calls_read.py`` (or ``make bench``); see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import psutil

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from audit_events_throughput import (  # noqa: E402 - the shared process, load and CPU helpers
    CLIENT_BOUND,
    HOST,
    Server,
    bench_env,
    drive,
    free_port,
    measure,
    postgres_processes,
    start_pair,
)
from summary import record  # noqa: E402

from entrypoints.cli.demo import FACTS, OUTCOME_SCHEMA, reachable_destination  # noqa: E402

SCRIPT = "calls_read.py"
RESULTS = BENCH_DIR / "results" / "calls_read.json"
PY_SPY = Path(sys.executable).with_name("py-spy")
CALLS = 30  # enough for a full page of 25
TARGET = 0.30  # of the bare GET, for the read by id
PROJECT_DIRS = ("domain/", "application/", "adapters/", "projections/", "entrypoints/")


def seed_calls(port: int, key: str, count: int, settle: float) -> str:
    """``count`` simulated calls, then a wait until none is still running (a quiet server): the id of one."""
    destination = reachable_destination(datetime.now(timezone.utc))
    if destination is None:
        raise SystemExit("no candidate destination is inside call hours right now")
    body = {"to": destination, "objective": "Confirm tomorrow's dental appointment.", "outcome_schema": OUTCOME_SCHEMA,
            "consent_type": "prior_express", "mode": "simulated", "simulation": {"facts": FACTS}}
    headers = {"Authorization": f"Bearer {key}"}
    ids: list[str] = []
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=30.0, trust_env=False, headers=headers) as http:
        for _ in range(count):
            answer = http.post("/v1/calls", json=body)
            if answer.status_code != 201:
                raise SystemExit(f"POST /v1/calls answered {answer.status_code}: {answer.text}")
            ids.append(answer.json()["call_id"])
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            page = http.get("/v1/calls", params={"limit": 200}).json()
            if page["total"] >= count and all(c["status"] in ("completed", "failed") for c in page["data"]):
                break
            time.sleep(0.5)
    return ids[0]


def granian_worker(server: Server) -> psutil.Process | None:
    children = [p for p in server.processes()[1:] if "python" in " ".join(p.cmdline()).lower()]
    return max(children, key=lambda p: sum(p.cpu_times()[:2]), default=None)


def profile(worker: psutil.Process, port: int, path: str, key: str, args: argparse.Namespace,
            output: Path) -> dict[str, Any]:
    """Top frames by own time (and this project's by inclusive time) while extra reads run."""
    if not PY_SPY.exists():
        return {"error": "py-spy is not installed (.venv/bin/pip install py-spy)"}
    seconds = max(1, round(args.profile_seconds))
    spy = subprocess.Popen([str(PY_SPY), "record", "-p", str(worker.pid), "-d", str(seconds), "-r", "200", "-f", "raw",
                            "--nolineno", "--gil", "-o", str(output)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    load = argparse.Namespace(**{**vars(args), "warmup": 0.2, "duration": seconds + 0.5})
    asyncio.run(drive(port, path, key, load))
    log, _ = spy.communicate(timeout=seconds + 30)
    if spy.returncode != 0 or not output.exists():
        return {"error": log.decode(errors="replace")[-500:]}
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in output.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count, frames = int(count_text), [f.strip() for f in stack.split(";")]
        own[frames[-1]] += count
        for frame in set(frames):
            if any(part in frame for part in PROJECT_DIRS) and "entrypoints/cli/" not in frame:
                inclusive[frame] += count
        total += count
    share = (lambda n: round(n / total, 4)) if total else (lambda n: 0.0)
    return {"samples": total, "self": [{"function": f, "share": share(n)} for f, n in own.most_common(12)],
            "inclusive": [{"function": f, "share": share(n)} for f, n in inclusive.most_common(12)]}


def report(results: dict[str, Any]) -> None:
    print(f"\nGET throughput, {results['concurrency']} connections, {results['duration_s']:.0f} s each after "
          f"{results['warmup_s']:.0f} s warm-up, {results['cpus']} CPUs, load average at start "
          f"{results['load_average_start']:.1f}")
    print(f"{'target':<34} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'server':>7} {'db':>6} {'client':>7}")
    for run in results["runs"]:
        cores = run["cores"]
        print(f"{run['label']:<34} {run['requests_per_s']:>9.0f} {run['latency_ms']['p50']:>8.2f} "
              f"{run['latency_ms']['p99']:>8.2f} {cores['server']:>7.2f} {cores['database']:>6.2f} "
              f"{cores['client']:>7.2f}")
        if run["errors"]:
            print(f"  non-200 answers: {run['errors']}")
    print(f"\nresult: read by id / bare = {results['ratios']['read_by_id']:.3f}  (target >= {TARGET})")
    print(f"        list of 25 / bare = {results['ratios']['list_25']:.3f}")
    print("(server/db/client columns: CPU cores busy while the load ran)")
    if results["runs"][0]["cores"]["client"] > CLIENT_BOUND:
        print("warning: the load generator used a whole core on the ceiling run; the ratios are overstated")
    spy = results.get("profile") or {}
    if "error" in spy:
        print(f"\npy-spy: {spy['error']}")
    elif spy:
        print(f"\npy-spy on the granian worker during extra reads by id ({spy['samples']} samples holding the GIL), own time:")
        for row in spy["self"][:10]:
            print(f"  {row['share']:6.1%}  {row['function']}")
        print("this project's functions, inclusive:")
        for row in spy["inclusive"][:10]:
            print(f"  {row['share']:6.1%}  {row['function']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per target")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of load before measuring")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw")
    parser.add_argument("--profile-seconds", type=float, default=3.0, help="0 disables py-spy")
    parser.add_argument("--settle-timeout", type=float, default=60.0, help="longest wait for the seeded calls to end")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--keep-profile", type=Path, help="copy py-spy's raw profile here")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the servers

    load_start = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-"))
    data_dir, app_port, bare_port = workdir / "var", free_port(), free_port()
    env = bench_env(data_dir, app_port)
    servers: list[Server] = []
    spy: dict[str, Any] = {}
    try:
        app, bare, key = start_pair(workdir, env, app_port, bare_port, servers)
        call_id = seed_calls(app_port, key, CALLS, args.settle_timeout)
        database = lambda: postgres_processes(data_dir)  # noqa: E731
        by_id, page = f"/v1/calls/{call_id}", "/v1/calls?limit=25"
        runs = [
            measure("bare Litestar GET /bare", bare_port, "/bare", key, args, bare.processes, list),
            measure("GET /v1/calls/{id}", app_port, by_id, key, args, app.processes, database),
            measure("GET /v1/calls?limit=25", app_port, page, key, args, app.processes, database),
        ]
        worker = granian_worker(app)
        if args.profile_seconds > 0 and worker is not None:
            spy = profile(worker, app_port, by_id, key, args, workdir / "read_by_id.raw")
            if args.keep_profile and (workdir / "read_by_id.raw").exists():
                shutil.copy(workdir / "read_by_id.raw", args.keep_profile)
    finally:
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    bare_rate = runs[0]["requests_per_s"] or 1.0
    results = {
        "benchmark": "calls_read",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(), "load_average_start": load_start,
        "concurrency": args.concurrency, "duration_s": args.duration, "warmup_s": args.warmup, "client": args.client,
        "runs": runs,
        "ratios": {"read_by_id": runs[1]["requests_per_s"] / bare_rate, "list_25": runs[2]["requests_per_s"] / bare_rate},
        "profile": spy,
    }
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    ratio = results["ratios"]["read_by_id"]
    record(SCRIPT, "GET /v1/calls/{id} / bare GET", ratio, f">= {TARGET}", met=ratio >= TARGET,
           note=f"{runs[1]['requests_per_s']:.0f} vs {bare_rate:.0f} req/s")
    record(SCRIPT, "GET /v1/calls?limit=25 / bare GET", results["ratios"]["list_25"], "none", met=None,
           note=f"{runs[2]['requests_per_s']:.0f} vs {bare_rate:.0f} req/s")
    print(f"written: {args.output}")
    return 1 if any(run["errors"] for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
