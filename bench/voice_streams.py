"""Concurrent media-stream voice sessions against a bare websocket echo on the same stack (ARCHITECTURE.md §11).

In one run: N sockets to ``bench/bare_app.py``'s ``/echo`` (granian, one worker), each sending a
media-shaped frame every 20 ms; the client's round trip per frame is the floor of stack and client.
Then N live ``alpha_31`` calls (stream transport, loopback speech, scripted agent) driven as the carrier
would: a frame every 20 ms for the whole window, an answer every ``--answer-every`` s, marks echoed.
Read ``result``: the server's time per frame (``callwright_voice_frame_seconds``, p99) against the
echo's p99 and the 20 ms target, and the agent's turn latency. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import math
import multiprocessing
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from array import array
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
from prometheus_client.parser import text_string_to_metric_families
from twilio.request_validator import RequestValidator
from websockets.asyncio.client import ClientConnection, connect

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from audit_events_throughput import (  # noqa: E402 - the shared process and CPU helpers
    CLIENT_BOUND, HOST, Server, bench_env, cpu_seconds, cpu_used, free_port, postgres_processes, start_pair)
from calls_create import (  # noqa: E402
    PROJECT_DIRS, PY_SPY, batch_destinations, embedded_conninfo, granian_worker, stop_orphaned_postgres,
    thread_cpu, thread_names, thread_split)

from summary import record  # noqa: E402

from adapters.speech.loopback import END_OF_UTTERANCE_FRAMES, SILENCE, UtteranceDecoder, encode_utterance  # noqa: E402
from entrypoints.cli.demo import reachable_destination  # noqa: E402
from tests.fakes.twilio.rest import FakeTwilio  # noqa: E402

RESULTS = BENCH_DIR / "results" / "voice_streams.json"
FRAME_SECONDS = 0.02
TARGET_MS = 20.0
FRAME_TARGET_MS = 5.0  # issue 20: the frame p99 at 200 streams
TURN_TARGET_MS = 30.0  # issue 20: the agent turn p99 at 200 streams (client, end of utterance to reply)
FIELDS = 50  # the most an outcome schema may have: one question per field, then goodbye
CALLER = "+14155550100"
PUBLIC_BASE_URL = "http://callwright-bench.invalid"  # not loopback: the fake carrier leaves the calls to us
HANDSHAKES = 32  # sockets opening at once, per client process
SID = "MZbench"


def media(frame: bytes) -> bytes:
    """A Twilio ``media`` message, encoded once: the client must stay far cheaper than the server."""
    return json.dumps({"event": "media", "sequenceNumber": "1", "streamSid": SID, "media": {
        "track": "inbound", "chunk": "1", "timestamp": "0", "payload": base64.b64encode(frame).decode()}}).encode()


SILENCE_MESSAGE = media(SILENCE)
ANSWERS = [[media(f) for f in encode_utterance(f"answer {i}")] + [SILENCE_MESSAGE] * END_OF_UTTERANCE_FRAMES
           for i in range(FIELDS)]


# --- the client: one asyncio task per socket, in one or more processes ------------------------------


@dataclass
class Schedule:
    start: float = math.inf  # perf_counter: CLOCK_MONOTONIC, the same clock in every process
    end: float = math.inf
    stop: float = math.inf

    def within(self, at: float) -> bool:
        return self.start <= at < self.end


@dataclass
class Tally:
    lag: array = field(default_factory=lambda: array("d"))  # a frame's send time minus its deadline
    rtt: array = field(default_factory=lambda: array("d"))  # echo round trip per frame
    turn: array = field(default_factory=lambda: array("d"))  # utterance's last frame sent -> first reply frame
    frames: int = 0
    answers: int = 0
    failures: list[str] = field(default_factory=list)


class Callee:
    """The carrier's side of one socket: a frame every 20 ms on absolute deadlines until the stop."""

    def __init__(self, ws: ClientConnection, schedule: Schedule, tally: Tally) -> None:
        self.ws, self.schedule, self.tally = ws, schedule, tally
        self.ready = asyncio.Event()
        self.answers, self.said = 0, ""

    def next_frame(self, due: float) -> tuple[bytes, bool]:
        return SILENCE_MESSAGE, False

    def sent(self, at: float, ends_utterance: bool) -> None:
        pass

    async def pace(self) -> None:
        due = time.perf_counter()
        while due < self.schedule.stop:
            if (delay := due - time.perf_counter()) > 0:
                await asyncio.sleep(delay)
            frame, ends = self.next_frame(due)
            at = time.perf_counter()
            if self.schedule.within(due):
                self.tally.lag.append(at - due)
                self.tally.frames += 1
            self.sent(at, ends)  # before the send, so no reply can arrive before its record
            await self.ws.send(frame, text=True)
            due += FRAME_SECONDS
            if at - due > 0.2:
                due = at  # far behind: skip ahead rather than burst (the lag figures show it)


class EchoCallee(Callee):
    def __init__(self, ws: ClientConnection, schedule: Schedule, tally: Tally) -> None:
        super().__init__(ws, schedule, tally)
        self.sent_at: deque[float] = deque()
        self.ready.set()

    def sent(self, at: float, ends_utterance: bool) -> None:
        self.sent_at.append(at)

    async def listen(self) -> None:
        async for _ in self.ws:
            at, sent = time.perf_counter(), self.sent_at.popleft()
            if self.schedule.within(sent):
                self.tally.rtt.append(at - sent)


class StreamCallee(Callee):
    """Answers the agent's question once its mark is back, at most one answer per ``interval``."""

    def __init__(self, ws: ClientConnection, schedule: Schedule, tally: Tally, interval: float) -> None:
        super().__init__(ws, schedule, tally)
        self.interval = interval
        self.pending: deque[bytes] = deque()
        self.agent_done, self.next_answer = False, 0.0
        self.utterance_end: float | None = None
        self.decoder = UtteranceDecoder()

    def next_frame(self, due: float) -> tuple[bytes, bool]:
        if not self.pending and self.agent_done and due >= self.next_answer:
            self.pending.extend(ANSWERS[self.answers % FIELDS])
            self.agent_done, self.next_answer = False, due + self.interval
            self.answers += 1
            self.tally.answers += self.schedule.within(due)
        if self.pending:
            return self.pending.popleft(), not self.pending
        return SILENCE_MESSAGE, False

    def sent(self, at: float, ends_utterance: bool) -> None:
        if ends_utterance:
            self.utterance_end = at

    async def listen(self) -> None:
        async for text in self.ws:
            message = json.loads(text)
            if message.get("event") == "media":
                if self.utterance_end is not None and self.schedule.within(self.utterance_end):
                    self.tally.turn.append(time.perf_counter() - self.utterance_end)
                self.utterance_end = None
                self.decoder.feed(base64.b64decode(message["media"]["payload"]))
            elif message.get("event") == "mark":  # played at once: echo it, the agent's turn is over
                await self.ws.send(json.dumps({"event": "mark", "streamSid": SID, "mark": message["mark"]}))
                self.said = self.decoder.flush() or self.said
                self.agent_done = True
                self.ready.set()


def start_message(spec: dict[str, str]) -> str:
    return json.dumps({"event": "start", "sequenceNumber": "1", "streamSid": SID, "start": {
        "streamSid": SID, "callSid": spec["sid"], "accountSid": spec["account_sid"], "tracks": ["inbound"],
        "customParameters": {"token": spec["token"]},
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}})


async def session(kind: str, port: int, spec: dict[str, str], schedule: Schedule, tally: Tally, interval: float,
                  gate: asyncio.Semaphore, ready: asyncio.Queue[bool]) -> None:
    """One socket from handshake to close; any failure is tallied (and reported as not ready)."""
    path = "/echo" if kind == "echo" else f"/webhooks/carrier/stream/{spec['call_id']}"
    signalled, tasks = False, []
    try:
        async with gate:
            ws = await connect(f"ws://{HOST}:{port}{path}", compression=None, proxy=None, ping_interval=None,
                               open_timeout=60, max_queue=None)
        callee = EchoCallee(ws, schedule, tally) if kind == "echo" else StreamCallee(ws, schedule, tally, interval)
        if kind == "stream":
            await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
            await ws.send(start_message(spec))
        pacer, listener, greeted = tasks = [asyncio.create_task(c) for c in
                                            (callee.pace(), callee.listen(), callee.ready.wait())]
        await asyncio.wait([greeted, listener], timeout=60, return_when=asyncio.FIRST_COMPLETED)
        signalled = True
        await ready.put(callee.ready.is_set())
        if not callee.ready.is_set():
            raise RuntimeError("closed before the greeting" if listener.done() else "no greeting within 60 s")
        await asyncio.wait([pacer, listener], return_when=asyncio.FIRST_COMPLETED)
        if listener.done():
            raise RuntimeError(f"closed by the server after {callee.answers} answers; last words {callee.said[:50]!r}")
        if kind == "stream":
            await ws.send(json.dumps({"event": "stop", "streamSid": SID}))
            await asyncio.wait_for(listener, 30)  # the server hangs up once the session is closed
        await ws.close()
    except Exception as exc:  # every failure is counted, and the run exits non-zero
        tally.failures.append(f"{kind} {spec.get('call_id', '')}: {type(exc).__name__}: {exc}"[:240])
        if not signalled:
            await ready.put(False)
    finally:
        for task in tasks:
            task.cancel()


async def drive(kind: str, port: int, specs: list[dict[str, str]], interval: float, conn: Any) -> None:
    schedule, tally = Schedule(), Tally()
    gate, ready = asyncio.Semaphore(HANDSHAKES), asyncio.Queue()  # type: ignore[var-annotated]
    tasks = [asyncio.create_task(session(kind, port, s, schedule, tally, interval, gate, ready)) for s in specs]
    for _ in specs:
        await ready.get()
    conn.send("ready")
    schedule.start, schedule.end, schedule.stop = await asyncio.get_running_loop().run_in_executor(None, conn.recv)
    await asyncio.gather(*tasks)
    conn.send({"lag": tally.lag, "rtt": tally.rtt, "turn": tally.turn, "frames": tally.frames,
               "answers": tally.answers, "failures": tally.failures})


def client_process(kind: str, port: int, specs: list[dict[str, str]], interval: float, conn: Any) -> None:
    asyncio.run(drive(kind, port, specs, interval, conn))


class Probe(threading.Thread):
    """Every 50 ms of a window: ``GET /healthz`` (one trip through the server's event loop) and a
    one-row INSERT commit on the server's own PostgreSQL (the database's floor under a turn's commit)."""

    def __init__(self, port: int, conninfo: str) -> None:
        super().__init__(name="probe", daemon=True)
        self.port, self.conninfo, self.done = port, conninfo, threading.Event()
        self.loop: list[float] = []
        self.commit: list[float] = []

    def run(self) -> None:
        with httpx.Client(base_url=f"http://{HOST}:{self.port}", timeout=30, trust_env=False) as http, \
                psycopg.connect(self.conninfo, autocommit=True) as db:
            db.execute("CREATE TABLE IF NOT EXISTS bench_voice_probe (at double precision)")
            while not self.done.wait(0.05):
                for trip, into in ((lambda: http.get("/healthz"), self.loop),
                                   (lambda: db.execute("INSERT INTO bench_voice_probe VALUES (1)"), self.commit)):
                    started = time.perf_counter()
                    trip()
                    into.append(time.perf_counter() - started)
            db.execute("DROP TABLE bench_voice_probe")

    def result(self) -> dict[str, Any]:
        self.done.set()
        self.join(timeout=30)
        return {"healthz_ms": percentiles(self.loop), "commit_ms": percentiles(self.commit)}


def run_clients(kind: str, port: int, specs: list[dict[str, str]], args: argparse.Namespace,
                observe: Any, probe: Probe, after_window: Any = None) -> dict[str, Any]:
    """Start the client processes, wait until every socket is up, measure the window, collect."""
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    for index in range(args.clients):
        parent, child = context.Pipe()
        processes.append(context.Process(target=client_process, name=f"voice-client-{index}",
                                         args=(kind, port, specs[index::args.clients], args.answer_every, child)))
        processes[-1].start()
        pipes.append(parent)
    tallies: list[dict[str, Any]] = []
    try:
        ramp = time.perf_counter()
        if not all(pipe.poll(300) and pipe.recv() == "ready" for pipe in pipes):
            raise SystemExit(f"{kind}: the clients did not open their sockets within 300 s")
        ramp = time.perf_counter() - ramp
        start = time.perf_counter() + args.warmup
        extra = 2 * args.profile_seconds + 2.0 if after_window is not None else 0.0  # two recordings
        schedule = (start, start + args.window, start + args.window + extra)
        for pipe in pipes:
            pipe.send(schedule)
        clients, snapshots = [psutil.Process(p.pid) for p in processes], []
        for index, moment in enumerate(schedule[:2]):
            time.sleep(max(0.0, moment - time.perf_counter()))
            snapshots.append(observe(clients))
            snapshots[-1]["cpu"]["machine"] = {0: machine_busy()}  # one pseudo-process: the whole machine
            if index == 0:
                probe.start()
        probes = probe.result()
        profile = after_window() if after_window is not None else None
        tallies = [pipe.recv() for pipe in pipes]
    finally:
        probe.done.set()
        for process in processes:
            process.join(timeout=60 if tallies else 0)
            if process.is_alive():
                process.kill()
    before, after = snapshots
    merged = {key: [v for t in tallies for v in t[key]] for key in ("lag", "rtt", "turn", "failures")}
    return {"sockets_up_s": ramp, "snapshots": snapshots, "profile": profile, "probes": probes,
            "cores": {side: cpu_used(before["cpu"][side], after["cpu"][side]) / args.window for side in before["cpu"]},
            "frames": sum(t["frames"] for t in tallies), "answers": sum(t["answers"] for t in tallies),
            "lag_ms": percentiles(merged["lag"]), "rtt_ms": percentiles(merged["rtt"]),
            "turn_ms": percentiles(merged["turn"]), "failures": merged["failures"]}


# --- measuring ------------------------------------------------------------------------------------


def machine_busy() -> float:
    """CPU seconds of every process on the machine (other people's work shows as machine minus ours)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    pick = lambda q: 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": pick(0.5), "p99": pick(0.99), "max": 1000 * ordered[-1], "n": len(values)}


def histogram(before: str, after: str, name: str, **labels: str) -> dict[float, float]:
    """Cumulative bucket counts (by upper bound) observed between two /metrics scrapes."""
    def buckets(text: str) -> dict[float, float]:
        return {float(s.labels["le"]): s.value for f in text_string_to_metric_families(text) if f.name == name
                for s in f.samples if s.name.endswith("_bucket")
                and all(s.labels.get(k) == v for k, v in labels.items())}
    first, second = buckets(before), buckets(after)
    return {le: second[le] - first.get(le, 0.0) for le in second}


def quantiles(cumulative: dict[float, float]) -> dict[str, Any]:
    """p50/p99 interpolated within their bucket as Prometheus does, and that bucket's bounds (ms)."""
    buckets = sorted(cumulative.items())
    total = buckets[-1][1] if buckets else 0.0
    out: dict[str, Any] = {"n": int(total), "over_target_share": 1 - cumulative.get(TARGET_MS / 1000, total) / total
                           if total else 0.0}
    for label, q in (("p50", 0.5), ("p99", 0.99)):
        low, seen = 0.0, 0.0
        for le, count in buckets:
            if total and count >= q * total:
                value = low if math.isinf(le) else low + (le - low) * (q * total - seen) / max(count - seen, 1e-9)
                out[label], out[f"{label}_bucket_ms"] = 1000 * value, [1000 * low, 1000 * le]
                break
            low, seen = le, count
    return out


def executor_waits(pid: int, seconds: float, output: Path) -> list[dict[str, Any]]:
    """Where the worker's ``core_N`` threads (the turns' blocking calls) and ``turn-log`` threads (the
    turns' appends) spend wall time, idle pools excluded: ``py-spy record --idle``, by leaf function
    and the innermost project frame above it."""
    subprocess.run([str(PY_SPY), "record", "-p", str(pid), "-d", str(max(1, round(seconds))), "-r", "100", "-f", "raw",
                    "--threads", "--idle", "--nolineno", "-o", str(output)], capture_output=True, timeout=seconds + 60,
                   stdin=subprocess.DEVNULL)
    spent: Counter[str] = Counter()
    for line in output.read_text().splitlines() if output.exists() else []:
        stack, _, count = line.rpartition(" ")
        thread, *raw = stack.split(";")
        frames = [f.strip().split(" (")[0] for f in raw]
        name = thread.rpartition(": ")[2].strip().strip("\"'")
        if count.isdigit() and name.startswith(("core_", "turn-log")) and frames[-1:] != ["_worker"]:
            project = [f for f, r in zip(frames, raw) if any(d in r for d in PROJECT_DIRS)]
            group = "turn-log" if name.startswith("turn-log") else "core"
            spent[f"{group}: {frames[-1] if frames else '?'} in {project[-1] if project else '?'}"] += int(count)
    total = sum(spent.values()) or 1
    return [{"where": where, "share": round(n / total, 3)} for where, n in spent.most_common(8)]


# Leaf frames where a thread waits (py-spy counts some of them as busy): left out of the top frames.
WAITING = ("wait", "select", "_worker", "poll", "sleep", "get", "acquire", "recv", "accept")


def added(frame: dict[str, Any], lag: dict[str, Any]) -> float | None:
    """A frame's added latency, p99, bounded from above: the loop's lateness (the wait before the
    frame is read) plus its handling. Without a loop-lag metric (older servers, whose frame metric
    included a hop through the loop), the frame metric alone."""
    if "p99" not in frame:
        return None
    return frame["p99"] + lag.get("p99", 0.0) if lag.get("n") else frame["p99"]


def top_frames(pid: int, seconds: float, output: Path) -> dict[str, Any]:
    """Where the worker's Python code spends CPU: ``py-spy record --gil`` (samples of the thread
    holding the GIL, waits left out), by leaf function (function and file), and the share of those
    samples per thread group."""
    subprocess.run([str(PY_SPY), "record", "-p", str(pid), "-d", str(max(1, round(seconds))), "-r", "100", "-f", "raw",
                    "--threads", "--gil", "--nolineno", "-o", str(output)], capture_output=True, timeout=seconds + 60,
                   stdin=subprocess.DEVNULL)
    leaves: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    for line in output.read_text().splitlines() if output.exists() else []:
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        thread, *raw = stack.split(";")
        name = thread.rpartition(": ")[2].strip().strip("\"'").rstrip("0123456789_") or "unnamed"
        leaf = raw[-1].strip() if raw else "?"
        function, _, where = leaf.partition(" (")
        if function.rpartition(".")[2].lower().startswith(WAITING):
            continue
        leaves[f"{function} ({Path(where.rstrip(')')).name})"] += int(count)
        threads[name] += int(count)
    total = sum(leaves.values()) or 1
    return {"samples": total, "threads": [{"thread": t, "share": round(n / total, 3)} for t, n in threads.most_common(6)],
            "leaves": [{"where": w, "share": round(n / total, 3)} for w, n in leaves.most_common(10)]}


def sweep(port: int, key: str, fake: FakeTwilio, account: Any, args: argparse.Namespace, scrape: Any,
          conninfo: str, app: Server) -> list[dict[str, Any]]:
    """Short runs at each ``--sweep`` size, each with calls of its own, until the frame p99 crosses
    the 20 ms target."""
    stages = []
    for n in args.sweep:
        specs = dialed_calls(port, key, fake, account, n, setup=False)
        answer_calls(port, specs)
        stage_args = argparse.Namespace(**{**vars(args), "window": args.sweep_window, "warmup": 1.0})
        run = run_clients("stream", port, specs, stage_args, lambda clients: {"cpu": {
            "server": cpu_seconds(app.processes()), "client": cpu_seconds(clients)}, "metrics": scrape()},
            Probe(port, conninfo))
        before, after = run.pop("snapshots")
        frame = quantiles(histogram(before["metrics"], after["metrics"], "callwright_voice_frame_seconds"))
        loop_lag = quantiles(histogram(before["metrics"], after["metrics"], "callwright_voice_loop_lag_seconds"))
        stages.append({"sessions": n, "frame_ms": frame, "loop_lag_ms": loop_lag, "added_p99_ms": added(frame, loop_lag),
                       "turn_ms": run["turn_ms"], "lag_ms": run["lag_ms"], "cores": run["cores"],
                       "failures": len(run["failures"])})
        print(f"sweep {n:>4} streams: frame added p99 {stages[-1]['added_p99_ms'] or math.nan:.2f} ms (handling "
              f"{ms(frame, 'p99')} + loop lag {ms(loop_lag, 'p99')}), turn p50/p99 {ms(run['turn_ms'], 'p50')} / "
              f"{ms(run['turn_ms'], 'p99')} ms (client), pacing lag p99 {ms(run['lag_ms'], 'p99')} ms, server "
              f"{run['cores']['server']:.2f} client {run['cores']['client']:.2f} cores, {len(run['failures'])} failed",
              flush=True)
        if (stages[-1]["added_p99_ms"] or math.inf) >= TARGET_MS:
            break
        time.sleep(2.0)  # the settler winds the last stage's calls down
    return stages


# --- setup: credentials, live calls, the carrier's callbacks -------------------------------------------


def signed_post(http: httpx.AsyncClient, url: str, form: dict[str, str], auth_token: str) -> Any:
    """As the carrier does: form-encoded, signed over the public URL it was sent to."""
    signature = RequestValidator(auth_token).compute_signature(url, form)
    return http.post(url.removeprefix(PUBLIC_BASE_URL), data=form, headers={"X-Twilio-Signature": signature})


async def each(port: int, items: list[Any], one: Any, headers: dict[str, str] | None = None) -> None:
    """``one(http, item)`` for every item, 16 at a time."""
    gate = asyncio.Semaphore(16)
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", headers=headers, timeout=60,
                                 trust_env=False) as http:
        async def bounded(item: Any) -> None:
            async with gate:
                await one(http, item)
        await asyncio.gather(*(bounded(item) for item in items))


def dialed_calls(port: int, key: str, fake: FakeTwilio, account: Any, count: int, *, setup: bool = True,
                 timeout: float = 180.0) -> list[dict[str, str]]:
    """Verify the carrier account and select the caller number (``setup``), create ``count`` live
    calls and wait until the server's call runner has dialled each one at the fake carrier; those calls."""
    setup_needed, known = setup, set(fake.calls)
    headers = {"Authorization": f"Bearer {key}"}
    now = datetime.now(timezone.utc)
    if (first := reachable_destination(now)) is None:
        raise SystemExit("no candidate destination is inside call hours right now")
    schema = {f"field_{i:02d}": {"type": "string"} for i in range(FIELDS)}
    steps = [("/v1/providers/carrier/verify", {"account_sid": account.sid, "auth_token": account.auth_token}),
             ("/v1/providers/select-number", {"e164": CALLER})]
    creates = [("/v1/calls", {"to": to, "objective": "Collect fifty answers, one question at a time.",
                              "outcome_schema": schema, "consent_type": "prior_express", "mode": "live",
                              "voice_engine": "alpha_31"}) for to in destinations(first, now, len(known), count)]

    async def post(http: httpx.AsyncClient, item: tuple[str, dict[str, Any]]) -> None:
        if (answer := await http.post(item[0], json=item[1])).status_code not in (200, 201):
            raise SystemExit(f"POST {item[0]}: {answer.status_code} {answer.text[:300]}")

    for step in ((steps[:1], steps[1:]) if setup_needed else ()) + (creates,):
        asyncio.run(each(port, step, post, headers))
    deadline = time.monotonic() + timeout
    while len(fake.calls) < len(known) + count:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(fake.calls) - len(known)} of {count} calls were dialled within {timeout:.0f} s")
        time.sleep(0.2)
    return [{"call_id": c["parameters"]["Url"][0].rsplit("/", 1)[1], "sid": c["sid"], "account_sid": account.sid,
             "to": c["to"], "auth_token": account.auth_token, "twiml_url": c["parameters"]["Url"][0],
             "status_url": c["parameters"]["StatusCallback"][0]}
            for sid, c in list(fake.calls.items()) if sid not in known]


def destinations(first: str, now: datetime, offset: int, count: int) -> list[str]:
    """``count`` destinations inside call hours, going on from the ``offset``-th (repeating past 400)."""
    pool = batch_destinations(first, now, 400)
    return [pool[(offset + i) % len(pool)] for i in range(count)]


def answer_calls(port: int, specs: list[dict[str, str]]) -> None:
    """The carrier fetches each call's TwiML (its single-use socket token) and reports a human answer."""
    async def one(http: httpx.AsyncClient, spec: dict[str, str]) -> None:
        form = {"CallSid": spec["sid"], "AccountSid": spec["account_sid"], "From": CALLER, "To": spec["to"],
                "CallStatus": "in-progress", "Direction": "outbound-api", "ApiVersion": "2010-04-01"}
        twiml = await signed_post(http, spec["twiml_url"], form, spec["auth_token"])
        stream = ET.fromstring(twiml.text).find("Connect/Stream") if twiml.status_code == 200 else None
        if stream is None:
            raise SystemExit(f"TwiML for {spec['call_id']}: {twiml.status_code} {twiml.text[:300]}")
        spec["token"] = {p.get("name"): p.get("value") for p in stream.findall("Parameter")}["token"]
        status = await signed_post(http, spec["status_url"], {**form, "AnsweredBy": "human"}, spec["auth_token"])
        if status.status_code != 204:
            raise SystemExit(f"status for {spec['call_id']}: {status.status_code} {status.text[:300]}")

    asyncio.run(each(port, specs, one))


# --- report and main ------------------------------------------------------------------------------


def ms(figures: dict[str, Any], q: str, width: int = 0) -> str:
    return f"{figures[q]:>{width}.2f}" if q in figures else f"{'-':>{width}}"


def report(results: dict[str, Any]) -> None:
    echo, streams, server = results["echo"], results["streams"], results["server_ms"]
    n, window = results["sessions"], results["window_s"]
    print(f"\n{n} sockets, a frame every 20 ms each way, {window:.0f} s window after {results['warmup_s']:.0f} s "
          f"warm-up, an answer every {results['answer_every_s']:g} s, {results['clients']} client process(es), "
          f"{results['cpus']} CPUs")
    print(f"{'target':<48} {'frames/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'server':>7} {'db':>6} {'client':>7} "
          f"{'others':>7}")
    rows = [("bare websocket echo: round trip per frame", echo, echo["rtt_ms"]),
            ("streams: server time per frame (metric)", streams, server["frame"]),
            ("streams: agent turn (server metric)", streams, server["turn"]),
            ("streams: agent turn (client, end of utterance)", streams, streams["turn_ms"])]
    for label, run, figures in rows:
        cores = run["cores"]
        others = max(0.0, cores["machine"] - sum(v for k, v in cores.items() if k != "machine"))
        print(f"{label:<48} {run['frames'] / window:>8.0f} {ms(figures, 'p50', 8)} {ms(figures, 'p99', 8)} "
              f"{cores['server']:>7.2f} {cores.get('database', 0):>6.2f} {cores['client']:>7.2f} {others:>7.2f}")
    for label, run in (("echo", echo), ("streams", streams)):
        lag = run["lag_ms"]
        print(f"client pacing lag ({label}): p50 {ms(lag, 'p50')} ms, p99 {ms(lag, 'p99')} ms, max {ms(lag, 'max')} ms "
              f"over {lag['n']} frames; every socket up {run['sockets_up_s']:.1f} s after the clients started")
    for label, run in (("idle server, while the echo ran", echo), ("during the streams", streams)):
        loop, commit = run["probes"]["healthz_ms"], run["probes"]["commit_ms"]
        print(f"probes, {label}: GET /healthz p50 {ms(loop, 'p50')} p99 {ms(loop, 'p99')} ms; one-row commit on its "
              f"database p50 {ms(commit, 'p50')} p99 {ms(commit, 'p99')} ms")
    for name, figures in server.items():
        print(f"server {name}: {figures['n']} observations, {100 * figures['over_target_share']:.2f}% over "
              f"{TARGET_MS:.0f} ms; p50 in the bucket {figures.get('p50_bucket_ms')} ms, p99 in "
              f"{figures.get('p99_bucket_ms')} ms")
    if server["frame"]["n"]:  # a p99 under the target needs fewer than 1% of the frames over it
        print(f"frames that ended an utterance (a turn): {100 * server['turn']['n'] / server['frame']['n']:.2f}% of "
              f"the frames")
    frame_p99 = results["frame_added_p99_ms"] or 0.0
    print(f"\nresult: frame added latency p99 (loop lag + handling) / echo round trip p99 = {results['ratio']:.2f}"
          f"  ({frame_p99:.2f} / {ms(echo['rtt_ms'], 'p99')} ms)")
    print(f"        added latency per frame p99 = {frame_p99:.2f} ms: "
          f"{'meets' if results['target_met'] else 'MISSES'} the {TARGET_MS:.0f} ms target at {n} streams; "
          f"{'meets' if frame_p99 < FRAME_TARGET_MS else 'MISSES'} issue 20's {FRAME_TARGET_MS:.0f} ms")
    turn_p99 = streams["turn_ms"].get("p99", math.inf)
    print(f"        agent turn p50 / p99 = {ms(streams['turn_ms'], 'p50')} / {turn_p99:.2f} ms (client): "
          f"{'meets' if turn_p99 < TURN_TARGET_MS else 'MISSES'} issue 20's {TURN_TARGET_MS:.0f} ms p99")
    print(f"        agent turn p99 = {ms(server['turn'], 'p99')} ms (server), {ms(streams['turn_ms'], 'p99')} ms "
          f"(client); {streams['answers']} answers in the window")
    print(f"sessions: {n} started, {len(results['failures'])} failed; the server ended them as "
          f"{results['server_sessions']}")
    for failure in results["failures"][:10]:
        print(f"  failed: {failure}")
    for label, run in (("echo", echo), ("streams", streams)):
        if run["cores"]["client"] > CLIENT_BOUND * results["clients"]:
            print(f"warning: the client used {run['cores']['client']:.2f} cores on the {label} run; try --clients 2")
    if max(echo["cores"]["machine"], streams["cores"]["machine"]) > 0.9 * (results["cpus"] or 1):
        print("warning: the machine's CPUs were nearly all busy (see 'others'): the figures measure contention")
    print("granian worker CPU by thread in the window (cores): "
          + ", ".join(f"{t['thread']} {t['cores']:.2f}" for t in results["server_threads"] if t["cores"] >= 0.01))
    if results.get("top_frames"):
        top = results["top_frames"]
        print(f"after the window, py-spy --gil (samples holding the GIL, {top['samples']}): by thread "
              + ", ".join(f"{t['thread']} {100 * t['share']:.0f}%" for t in top["threads"]))
        print("  top frames: " + "; ".join(f"{w['where']} {100 * w['share']:.0f}%" for w in top["leaves"][:8]))
    if results.get("crossing_sessions") or results.get("sweep"):
        crossing = results.get("crossing_sessions")
        print(f"frame p99 crosses {TARGET_MS:.0f} ms at: "
              + (f"{crossing} streams" if crossing else f"not up to {results['sweep'][-1]['sessions']} streams"))
    if results.get("executor_waits"):
        print("after the window, py-spy --idle: where the executor threads (the turns' blocking calls) spent their "
              "wall time when not idle: " + "; ".join(f"{w['where']} {100 * w['share']:.0f}%"
                                                      for w in results["executor_waits"][:5]))


def keep(results: dict[str, Any]) -> None:
    """The headline figures, against issue 20's targets, into ``bench/results/summary.md``."""
    n, server, client = results["sessions"], results["server_ms"], results["streams"]["turn_ms"]
    turn_p99, frame_p99 = client.get("p99"), results["frame_added_p99_ms"]
    record("voice_streams.py", f"agent turn p50 at {n} streams (client, ms)", client.get("p50"), "report", met=None)
    record("voice_streams.py", f"agent turn p99 at {n} streams (client, ms)", turn_p99, f"< {TURN_TARGET_MS:.0f}",
           met=turn_p99 is not None and turn_p99 < TURN_TARGET_MS)
    record("voice_streams.py", f"frame p99 at {n} streams (server: loop lag + handling, ms)", frame_p99,
           f"< {FRAME_TARGET_MS:.0f}", met=frame_p99 is not None and frame_p99 < FRAME_TARGET_MS,
           note=f"handling {server['frame'].get('p99', math.nan):.2f} ms, loop lag "
                f"{server['loop_lag'].get('p99', math.nan):.2f} ms; echo round trip p99 "
                f"{results['echo']['rtt_ms'].get('p99', math.nan):.2f} ms")
    stages = results["sweep"]
    if stages:
        crossing = results["crossing_sessions"]
        tried = ", ".join(f"{s['sessions']}: {s['added_p99_ms'] or math.nan:.1f} ms" for s in stages)
        record("voice_streams.py", "streams at which frame p99 crosses 20 ms", crossing, "report", met=None,
               note=f"frame p99 (loop lag + handling) by streams {tried}" + ("" if crossing else f"; not crossed up to {stages[-1]['sessions']}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=1, help="client processes sharing the sockets")
    parser.add_argument("--window", type=float, default=12.0, help="seconds measured, once every socket is up")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--answer-every", type=float, default=3.0,
                        help="seconds between a callee's answers (a question played, then an answer)")
    parser.add_argument("--profile-seconds", type=float, default=3.0,
                        help="each of the two py-spy recordings after the window; 0: none")
    parser.add_argument("--sweep", type=lambda v: [int(n) for n in v.split(",") if n], default=[300, 400],
                        help="stream counts tried after the main run, until the frame p99 crosses 20 ms ('' : none)")
    parser.add_argument("--sweep-window", type=float, default=5.0, help="seconds measured at each sweep size")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the servers
    if FIELDS * args.answer_every < args.warmup + args.window + args.profile_seconds + 20:
        print(f"warning: {FIELDS} answers every {args.answer_every} s may end the calls before the window does")

    workdir = Path(tempfile.mkdtemp(prefix="callwright-bench-"))
    data_dir, app_port, bare_port = workdir / "var", free_port(), free_port()
    fake = FakeTwilio().start()
    env = bench_env(data_dir, app_port)
    env.update(CALLWRIGHT_TWILIO_API_BASE_URL=fake.base_url, CALLWRIGHT_PUBLIC_BASE_URL=PUBLIC_BASE_URL,
               CALLWRIGHT_VOICE_PROFILES='{"alpha_31": {"transport": "stream"}}', CALLWRIGHT_RECORD_CALLS="0",
               CALLWRIGHT_RECONCILE_AFTER_SECONDS="3600")  # no carrier look-ups of calls still talking
    servers: list[Server] = []
    try:
        app, bare, key = start_pair(workdir, env, app_port, bare_port, servers)
        account = fake.add_account(numbers=[(CALLER, "Bench")])
        specs = dialed_calls(app_port, key, fake, account, args.sessions)
        if (worker := granian_worker(app)) is None:
            raise SystemExit("could not find the granian worker process of callwright serve")
        scrape = lambda: httpx.get(f"http://{HOST}:{app_port}/metrics", timeout=30, trust_env=False).text  # noqa: E731
        profile = None  # py-spy pauses the worker for every sample: only after the window
        if args.profile_seconds > 0 and PY_SPY.exists():
            profile = lambda: {  # noqa: E731
                "top": top_frames(worker.pid, args.profile_seconds, workdir / "busy.raw"),
                "executor": executor_waits(worker.pid, args.profile_seconds, workdir / "idle.raw")}

        conninfo = embedded_conninfo(data_dir)
        echo = run_clients("echo", bare_port, [{} for _ in specs], args, lambda clients: {"cpu": {
            "server": cpu_seconds(bare.processes()), "client": cpu_seconds(clients)}}, Probe(app_port, conninfo))
        answer_calls(app_port, specs)
        streams = run_clients("stream", app_port, specs, args, lambda clients: {"cpu": {
            "server": cpu_seconds(app.processes()), "database": cpu_seconds(postgres_processes(data_dir)),
            "client": cpu_seconds(clients)}, "metrics": scrape(), "threads": thread_cpu(worker)},
            Probe(app_port, conninfo), profile)
        time.sleep(1.0)  # the server counts a session before its socket closes; be sure of the last ones
        ended = Counter({s.labels["reason"]: int(s.value) for f in text_string_to_metric_families(scrape())
                         if f.name == "callwright_voice_sessions" for s in f.samples
                         if s.name.endswith("_total") and s.labels.get("transport") == "stream"})
        names = thread_names(worker.pid) if PY_SPY.exists() else {}
        stages = sweep(app_port, key, fake, account, args, scrape, conninfo, app) if args.sweep else []
    finally:
        for server in reversed(servers):
            server.stop()
        fake.stop()
        stop_orphaned_postgres(data_dir)
        shutil.rmtree(workdir, ignore_errors=True)

    before, after = streams.pop("snapshots")
    echo.pop("snapshots")
    frames = histogram(before["metrics"], after["metrics"], "callwright_voice_frame_seconds")
    turns = histogram(before["metrics"], after["metrics"], "callwright_voice_turn_seconds", transport="stream")
    loop_lag = histogram(before["metrics"], after["metrics"], "callwright_voice_loop_lag_seconds")
    server = {"frame": quantiles(frames), "loop_lag": quantiles(loop_lag), "turn": quantiles(turns)}
    failures = echo["failures"] + streams["failures"]
    results = {
        "benchmark": "voice_streams",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "sessions": args.sessions, "clients": args.clients, "window_s": args.window, "warmup_s": args.warmup,
        "answer_every_s": args.answer_every,
        "echo": echo, "streams": {k: v for k, v in streams.items() if k != "profile"}, "server_ms": server,
        "ratio": (added(server["frame"], server["loop_lag"]) or 0.0) / max(echo["rtt_ms"].get("p99", 0.0), 1e-9),
        "target_met": (added(server["frame"], server["loop_lag"]) or math.inf) < TARGET_MS,
        "server_sessions": dict(ended),
        "server_threads": thread_split(before["threads"], after["threads"], names, args.window),
        "executor_waits": (streams["profile"] or {}).get("executor"),
        "top_frames": (streams["profile"] or {}).get("top"),
        "sweep": stages,
        "frame_added_p99_ms": added(server["frame"], server["loop_lag"]),
        "crossing_sessions": next((s["sessions"] for s in stages if (s["added_p99_ms"] or math.inf) >= TARGET_MS),
                                  None),
        "failures": failures,
    }
    report(results)
    keep(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.output}")
    return 1 if failures or sum(ended.values()) < args.sessions else 0


if __name__ == "__main__":
    sys.exit(main())
