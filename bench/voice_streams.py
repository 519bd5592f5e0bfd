"""Concurrent media-stream voice sessions against a bare websocket echo on the same stack (ARCHITECTURE.md §11).

In one run, on this machine: N sockets to ``bench/bare_app.py``'s ``/echo`` (granian, one worker), each
sending a media-shaped JSON frame every 20 ms: the client's round trip per frame is the floor of the
stack plus the client. Then N live calls on ``alpha_31`` (stream transport, loopback speech, scripted
agent) driven as the carrier would: a frame every 20 ms each way for the whole window, an answer each
``--answer-every`` seconds, every mark echoed. Read ``result``: the server's time per frame (its
``callwright_voice_frame_seconds`` histogram, p99) against the echo's p99 and against the 20 ms target,
and the agent's turn latency. Run: ``.venv/bin/python bench/voice_streams.py [--sessions 200]``; see
bench/README.md.
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
import sys
import tempfile
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
from prometheus_client.parser import text_string_to_metric_families
from twilio.request_validator import RequestValidator
from websockets.asyncio.client import ClientConnection, connect

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from audit_events_throughput import (  # noqa: E402 - the shared process and CPU helpers
    CLIENT_BOUND, HOST, Server, bench_env, cpu_seconds, cpu_used, free_port, postgres_processes, start_pair)
from calls_create import (  # noqa: E402
    PY_SPY, Profile, batch_destinations, granian_worker, stop_orphaned_postgres, thread_cpu, thread_names, thread_split)

from adapters.speech.loopback import END_OF_UTTERANCE_FRAMES, SILENCE, UtteranceDecoder, encode_utterance  # noqa: E402
from entrypoints.cli.demo import reachable_destination  # noqa: E402
from tests.fakes.twilio.rest import FakeTwilio  # noqa: E402

RESULTS = BENCH_DIR / "results" / "voice_streams.json"
FRAME_SECONDS = 0.02
TARGET_MS = 20.0
FIELDS = 50  # the most an outcome schema may have: one question per field, then goodbye
CALLER = "+14155550100"
# Not loopback, so the fake carrier leaves the calls to this script instead of simulating them.
PUBLIC_BASE_URL = "http://callwright-bench.invalid"
HANDSHAKES = 32  # sockets opening at once, per client process


def media(frame: bytes) -> bytes:
    """A Twilio ``media`` message, encoded once: the client must stay far cheaper than the server."""
    return json.dumps({"event": "media", "sequenceNumber": "1", "streamSid": "MZbench", "media": {
        "track": "inbound", "chunk": "1", "timestamp": "0", "payload": base64.b64encode(frame).decode()}}).encode()


SILENCE_MESSAGE = media(SILENCE)
ANSWERS = [[media(f) for f in encode_utterance(f"answer {i}")] + [SILENCE_MESSAGE] * END_OF_UTTERANCE_FRAMES
           for i in range(FIELDS)]


# --- the client: one asyncio task per socket, in one or more processes ------------------------------


@dataclass
class Schedule:
    start: float = math.inf  # perf_counter (CLOCK_MONOTONIC: the same in every process)
    end: float = math.inf
    stop: float = math.inf

    def within(self, at: float) -> bool:
        return self.start <= at < self.end


@dataclass
class Tally:
    lag: array = field(default_factory=lambda: array("d"))  # client: send time minus the frame's deadline
    rtt: array = field(default_factory=lambda: array("d"))  # echo round trip per frame
    turn: array = field(default_factory=lambda: array("d"))  # last frame of an utterance -> first reply frame
    frames: int = 0
    answers: int = 0
    failures: list[str] = field(default_factory=list)


class Callee:
    """The carrier's side of one socket: a frame every 20 ms on absolute deadlines until the stop."""

    def __init__(self, ws: ClientConnection, schedule: Schedule, tally: Tally) -> None:
        self.ws, self.schedule, self.tally = ws, schedule, tally
        self.ready = asyncio.Event()
        self.closed_early: str | None = None

    def next_frame(self, due: float) -> tuple[bytes, bool]:
        return SILENCE_MESSAGE, False

    def sent(self, at: float, ends_utterance: bool) -> None:
        pass

    async def pace(self) -> None:
        due = time.perf_counter()
        while due < self.schedule.stop and self.closed_early is None:
            if (delay := due - time.perf_counter()) > 0:
                await asyncio.sleep(delay)
            frame, ends = self.next_frame(due)
            at = time.perf_counter()
            if self.schedule.within(due):
                self.tally.lag.append(at - due)
                self.tally.frames += 1
            self.sent(at, ends)  # before the send, so no answer can arrive before its record
            await self.ws.send(frame, text=True)
            due += FRAME_SECONDS
            if at - due > 0.2:
                due = at  # far behind: skip ahead rather than burst (the lag figures show it)


class EchoCallee(Callee):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
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
    """Answers the agent's question once its mark came back, at most one answer per ``interval``."""

    def __init__(self, ws: ClientConnection, schedule: Schedule, tally: Tally, interval: float) -> None:
        super().__init__(ws, schedule, tally)
        self.interval = interval
        self.pending: deque[bytes] = deque()
        self.agent_done = False
        self.next_answer = 0.0
        self.answers = 0
        self.utterance_end: float | None = None
        self.decoder = UtteranceDecoder()
        self.said = ""

    def next_frame(self, due: float) -> tuple[bytes, bool]:
        if not self.pending and self.agent_done and due >= self.next_answer:
            self.pending.extend(ANSWERS[self.answers % FIELDS])
            self.agent_done, self.next_answer = False, due + self.interval
            self.answers += 1
            if self.schedule.within(due):
                self.tally.answers += 1
        if self.pending:
            return self.pending.popleft(), not self.pending
        return SILENCE_MESSAGE, False

    def sent(self, at: float, ends_utterance: bool) -> None:
        if ends_utterance:
            self.utterance_end = at

    async def listen(self) -> None:
        async for text in self.ws:
            message = json.loads(text)
            event = message.get("event")
            if event == "media":
                if self.utterance_end is not None:
                    if self.schedule.within(self.utterance_end):
                        self.tally.turn.append(time.perf_counter() - self.utterance_end)
                    self.utterance_end = None
                self.decoder.feed(base64.b64decode(message["media"]["payload"]))
            elif event == "mark":  # played at once: echo it, the agent's turn is over
                await self.ws.send(json.dumps({"event": "mark", "streamSid": "MZbench", "mark": message["mark"]}))
                self.said = self.decoder.flush() or self.said
                self.agent_done = True
                self.ready.set()


async def session(kind: str, port: int, spec: dict[str, str], schedule: Schedule, tally: Tally, interval: float,
                  gate: asyncio.Semaphore, ready: asyncio.Queue[bool]) -> None:
    path = "/echo" if kind == "echo" else f"/webhooks/carrier/stream/{spec['call_id']}"
    signalled, tasks = False, []
    try:
        async with gate:
            ws = await connect(f"ws://{HOST}:{port}{path}", compression=None, proxy=None, ping_interval=None,
                               open_timeout=60, max_queue=None)
        callee = EchoCallee(ws, schedule, tally) if kind == "echo" else StreamCallee(ws, schedule, tally, interval)
        if kind == "stream":
            await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
            await ws.send(json.dumps({"event": "start", "sequenceNumber": "1", "streamSid": "MZbench", "start": {
                "streamSid": "MZbench", "callSid": spec["sid"], "accountSid": spec["account_sid"],
                "tracks": ["inbound"], "customParameters": {"token": spec["token"]},
                "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}}))
        pacer, listener, greeted = tasks = [asyncio.create_task(c) for c in
                                            (callee.pace(), callee.listen(), callee.ready.wait())]
        await asyncio.wait([greeted, listener], timeout=60, return_when=asyncio.FIRST_COMPLETED)
        signalled = True
        await ready.put(callee.ready.is_set())
        if not callee.ready.is_set():
            raise RuntimeError("closed before the greeting" if listener.done() else "no greeting within 60 s")
        await asyncio.wait([pacer, listener], return_when=asyncio.FIRST_COMPLETED)
        if listener.done():  # the server hung up before the stop
            callee.closed_early = f"closed by the server after {getattr(callee, 'answers', 0)} answers"
            raise RuntimeError(f"{callee.closed_early}; last words {getattr(callee, 'said', '')[:60]!r}")
        await pacer
        if kind == "stream":
            await ws.send(json.dumps({"event": "stop", "streamSid": "MZbench"}))
            await asyncio.wait_for(listener, 30)  # the server closes once the session is closed
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
    import gc
    if os.environ.get("VS_FREEZE"):
        gc.freeze()
    pauses = []
    started = [0.0]
    def cb(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((time.perf_counter() - started[0], info["generation"]))
    gc.callbacks.append(cb)
    asyncio.run(drive(kind, port, specs, interval, conn))
    big = sorted(pauses, reverse=True)[:5]
    print(f"GC {kind}: {len(pauses)} collections, total {sum(p for p, _ in pauses):.3f} s, biggest {big}", file=sys.stderr)


# --- measuring ------------------------------------------------------------------------------------


def percentiles(values: array | list[float]) -> dict[str, float]:
    ordered = sorted(values) or [0.0]
    pick = lambda q: 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": pick(0.5), "p99": pick(0.99), "max": 1000 * ordered[-1], "n": len(values)}


def histogram(before: str, after: str, name: str, **labels: str) -> dict[float, float]:
    """Cumulative bucket counts (by upper bound) observed between two /metrics scrapes."""
    def buckets(text: str) -> dict[float, float]:
        return {float(s.labels["le"]): s.value for f in text_string_to_metric_families(text) if f.name == name
                for s in f.samples if s.name.endswith("_bucket") and all(s.labels.get(k) == v for k, v in labels.items())}
    first, second = buckets(before), buckets(after)
    return {le: second[le] - first.get(le, 0.0) for le in second}


def quantiles(cumulative: dict[float, float]) -> dict[str, Any]:
    """p50/p99 interpolated within their bucket as Prometheus does, and that bucket's bounds (ms)."""
    buckets = sorted(cumulative.items())
    total = buckets[-1][1] if buckets else 0.0
    out: dict[str, Any] = {"n": int(total)}
    for label, q in (("p50", 0.5), ("p99", 0.99)):
        low, seen = 0.0, 0.0
        for le, count in buckets:
            if total and count >= q * total:
                value = low if math.isinf(le) else low + (le - low) * (q * total - seen) / max(count - seen, 1e-9)
                out[label], out[f"{label}_bucket_ms"] = 1000 * value, [1000 * low, 1000 * le]
                break
            low, seen = le, count
    return out


def without(frames: dict[float, float], turns: dict[float, float]) -> dict[float, float]:
    """Frames that ended no utterance, roughly: the turn histogram taken off the frame histogram (a
    turn's frame takes a little longer than its turn, so a few may sit one bucket higher)."""
    out, floor = {}, 0.0
    for le in sorted(frames):
        floor = out[le] = max(floor, frames[le] - turns.get(le, 0.0))
    return out


def machine_busy() -> float:
    """CPU seconds every process on the machine used (the others' work shows as machine minus ours)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def run_clients(kind: str, port: int, specs: list[dict[str, str]], args: argparse.Namespace,
                observe: Any, during: Any = None) -> dict[str, Any]:
    """Start the client processes, wait until every socket is up, measure the window, collect."""
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    for index in range(args.clients):
        parent, child = context.Pipe()
        process = context.Process(target=client_process, name=f"voice-client-{index}",
                                  args=(kind, port, specs[index::args.clients], args.answer_every, child))
        process.start()
        pipes.append(parent)
        processes.append(process)
    try:
        ramp = time.perf_counter()
        for pipe in pipes:
            if not pipe.poll(300) or pipe.recv() != "ready":
                raise SystemExit(f"{kind}: the client processes did not connect their sockets within 300 s")
        ramp = time.perf_counter() - ramp
        start = time.perf_counter() + args.warmup
        extra = args.profile_seconds + 1.0 if during is not None else 0.0
        schedule = (start, start + args.window, start + args.window + extra)
        for pipe in pipes:
            pipe.send(schedule)
        clients = [psutil.Process(p.pid) for p in processes]
        time.sleep(max(0.0, schedule[0] - time.perf_counter()))
        before = observe(clients)
        before["cpu"]["machine"] = {0: machine_busy()}
        time.sleep(max(0.0, schedule[1] - time.perf_counter()))
        after = observe(clients)
        after["cpu"]["machine"] = {0: machine_busy()}
        extra_result = during() if during is not None else None
        tallies = [pipe.recv() for pipe in pipes]
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
    merged: dict[str, Any] = {key: [v for t in tallies for v in t[key]] for key in ("lag", "rtt", "turn", "failures")}
    cores = {side: cpu_used(before["cpu"][side], after["cpu"][side]) / args.window for side in before["cpu"]}
    return {"ramp_s": ramp, "before": before, "after": after, "cores": cores, "profile": extra_result,
            "frames": sum(t["frames"] for t in tallies), "answers": sum(t["answers"] for t in tallies),
            "lag_ms": percentiles(merged["lag"]), "rtt_ms": percentiles(merged["rtt"]),
            "turn_ms": percentiles(merged["turn"]), "failures": merged["failures"]}


# --- setup: credentials, live calls, the carrier's callbacks -------------------------------------------


def signed_post(http: httpx.AsyncClient | httpx.Client, url: str, form: dict[str, str], auth_token: str) -> Any:
    """As the carrier does: form-encoded, signed over the public URL it was sent to."""
    signature = RequestValidator(auth_token).compute_signature(url, form)
    return http.post(url.removeprefix(PUBLIC_BASE_URL), data=form, headers={"X-Twilio-Signature": signature})


def dialed_calls(port: int, key: str, fake: FakeTwilio, count: int, timeout: float = 180.0) -> list[dict[str, str]]:
    """Verify the carrier account, pick the caller number, create ``count`` live calls and wait until
    the server's call runner has dialled each one at the fake carrier."""
    account = fake.add_account(numbers=[(CALLER, "Bench")])
    headers = {"Authorization": f"Bearer {key}"}
    now = datetime.now(timezone.utc)
    first = reachable_destination(now)
    if first is None:
        raise SystemExit("no candidate destination is inside call hours right now")
    schema = {f"field_{i:02d}": {"type": "string"} for i in range(FIELDS)}
    bodies = [{"to": to, "objective": "Collect fifty answers, one question at a time.", "outcome_schema": schema,
               "consent_type": "prior_express", "mode": "live", "voice_engine": "alpha_31"}
              for to in batch_destinations(first, now, count)]
    with httpx.Client(base_url=f"http://{HOST}:{port}", headers=headers, timeout=60, trust_env=False) as http:
        for path, body in (("/v1/providers/carrier/verify", {"account_sid": account.sid,
                                                              "auth_token": account.auth_token}),
                           ("/v1/providers/select-number", {"e164": CALLER})):
            if (answer := http.post(path, json=body)).status_code != 200:
                raise SystemExit(f"{path}: {answer.status_code} {answer.text}")

    async def create_all() -> None:
        gate = asyncio.Semaphore(16)
        async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", headers=headers, timeout=60,
                                     trust_env=False) as http:
            async def one(body: dict[str, Any]) -> None:
                async with gate:
                    if (answer := await http.post("/v1/calls", json=body)).status_code != 201:
                        raise SystemExit(f"POST /v1/calls: {answer.status_code} {answer.text}")
            await asyncio.gather(*(one(body) for body in bodies))

    asyncio.run(create_all())
    deadline = time.monotonic() + timeout
    while len(fake.calls) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(fake.calls)} of {count} calls were dialled within {timeout:.0f} s")
        time.sleep(0.2)
    return [{"call_id": c["parameters"]["Url"][0].rsplit("/", 1)[1], "sid": c["sid"], "account_sid": account.sid,
             "to": c["to"], "auth_token": account.auth_token, "twiml_url": c["parameters"]["Url"][0],
             "status_url": c["parameters"]["StatusCallback"][0]} for c in list(fake.calls.values())]


def answer_calls(port: int, specs: list[dict[str, str]]) -> None:
    """The carrier fetches each call's TwiML (its socket token) and reports a human answer."""
    async def run() -> None:
        gate = asyncio.Semaphore(16)
        async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=60, trust_env=False) as http:
            async def one(spec: dict[str, str]) -> None:
                form = {"CallSid": spec["sid"], "AccountSid": spec["account_sid"], "From": CALLER, "To": spec["to"],
                        "CallStatus": "in-progress", "Direction": "outbound-api", "ApiVersion": "2010-04-01"}
                async with gate:
                    twiml = await signed_post(http, spec["twiml_url"], form, spec["auth_token"])
                    stream = ET.fromstring(twiml.text).find("Connect/Stream")
                    if twiml.status_code != 200 or stream is None:
                        raise SystemExit(f"TwiML for {spec['call_id']}: {twiml.status_code} {twiml.text[:300]}")
                    spec["token"] = {p.get("name"): p.get("value") for p in stream.findall("Parameter")}["token"]
                    status = await signed_post(http, spec["status_url"], {**form, "AnsweredBy": "human"},
                                               spec["auth_token"])
                    if status.status_code != 204:
                        raise SystemExit(f"status for {spec['call_id']}: {status.status_code} {status.text[:300]}")
            await asyncio.gather(*(one(spec) for spec in specs))

    asyncio.run(run())


# --- report ---------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> None:
    echo, streams, server = results["echo"], results["streams"], results["server_ms"]
    n, window = results["sessions"], results["window_s"]
    print(f"\n{n} sockets, a frame every 20 ms each way, {window:.0f} s window after {results['warmup_s']:.0f} s "
          f"warm-up, an answer every {results['answer_every_s']:.0f} s, {results['clients']} client process(es), "
          f"{results['cpus']} CPUs, load average {results['load_average_1m']['start']} at the start")
    print(f"{'target':<48} {'frames/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'server':>7} {'db':>6} {'client':>7}")
    rows = [("bare websocket echo: round trip per frame", echo, echo["rtt_ms"]),
            ("streams: server time per frame (metric)", streams, server["frame"]),
            ("  frames that ended no utterance (approx.)", streams, server["frame_without_turns"]),
            ("streams: agent turn (server metric)", streams, server["turn"]),
            ("streams: agent turn (client, end of utterance)", streams, streams["turn_ms"])]
    for label, run, figures in rows:
        cores = run["cores"]
        print(f"{label:<48} {run['frames'] / window:>8.0f} {figures.get('p50', 0):>8.2f} {figures.get('p99', 0):>8.2f} "
              f"{cores['server']:>7.2f} {cores.get('database', 0):>6.2f} {cores['client']:>7.2f}")
    for label, run in (("echo", echo), ("streams", streams)):
        cores, lag = run["cores"], run["lag_ms"]
        print(f"machine busy ({label}): {cores['machine']:.2f} cores, of which {cores['machine'] - sum(v for k, v in cores.items() if k != 'machine'):.2f} "
              "neither this server, its database nor the client")
        print(f"client pacing lag ({label}): p50 {lag['p50']:.2f} ms, p99 {lag['p99']:.2f} ms, max {lag['max']:.1f} ms "
              f"over {lag['n']} frames; all sockets up {run['ramp_s']:.1f} s after the start")
    for name, figures in server.items():
        print(f"server {name}: {figures['n']} observations, p50 in bucket {figures.get('p50_bucket_ms')} ms, "
              f"p99 in {figures.get('p99_bucket_ms')} ms")
    frame_p99, verdict = server["frame"].get("p99", 0.0), "meets" if results["target_met"] else "MISSES"
    print(f"\nresult: server time per frame p99 / echo round trip p99 = {results['ratio']:.2f}"
          f"  ({frame_p99:.2f} / {echo['rtt_ms']['p99']:.2f} ms)")
    print(f"        added latency per frame p99 = {frame_p99:.2f} ms: {verdict} the {TARGET_MS:.0f} ms target at {n}")
    print(f"        agent turn p99 = {server['turn'].get('p99', 0):.1f} ms (server), "
          f"{streams['turn_ms']['p99']:.1f} ms (client); {streams['answers']} answers in the window")
    print(f"sessions: {n} started, {len(results['failures'])} failed; the server ended them as "
          f"{results['server_sessions']}")
    for failure in results["failures"][:10]:
        print(f"  failed: {failure}")
    for label, run in (("echo", echo), ("streams", streams)):
        if run["cores"]["client"] > CLIENT_BOUND * results["clients"]:
            print(f"warning: the client used {run['cores']['client']:.2f} cores on the {label} run; try --clients 2")
    print("granian worker CPU by thread in the window (cores): "
          + ", ".join(f"{t['thread']} {t['cores']:.2f}" for t in results["server_threads"] if t["cores"] >= 0.01))
    profile = results.get("profile") or {}
    if "self" in profile:
        print(f"py-spy on the worker after the window ({profile['samples']} samples holding the GIL, "
              f"held {100 * profile['cores_busy']:.0f}% of the time); top self:")
        for item in profile["self"][:12]:
            print(f"    {100 * item['share']:5.1f}%  {item['function']}")
    elif profile:
        print(f"py-spy failed: {profile.get('error')}")


# --- main -----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=1, help="client processes sharing the sockets")
    parser.add_argument("--window", type=float, default=20.0, help="seconds measured, once every socket is up")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--answer-every", type=float, default=3.0,
                        help="seconds between a callee's answers (a question played, then an answer)")
    parser.add_argument("--profile-seconds", type=float, default=5.0, help="py-spy after the window; 0: none")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the servers
    if FIELDS * args.answer_every < args.warmup + args.window + args.profile_seconds + 20:
        print(f"warning: {FIELDS} answers every {args.answer_every} s may end the calls before the window does")

    load_before = os.getloadavg()
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
        specs = dialed_calls(app_port, key, fake, args.sessions)
        worker = granian_worker(app)
        if worker is None:
            raise SystemExit("could not find the granian worker process of callwright serve")
        scrape = lambda: httpx.get(f"http://{HOST}:{app_port}/metrics", timeout=30, trust_env=False).text  # noqa: E731
        database = lambda: postgres_processes(data_dir)  # noqa: E731
        profile = None
        if args.profile_seconds > 0 and PY_SPY.exists():
            profile = lambda: Profile(worker.pid, args.profile_seconds, 200, workdir / "streams.raw").result()  # noqa: E731

        echo = run_clients("echo", bare_port, [{} for _ in specs], args, lambda clients: {"cpu": {
            "server": cpu_seconds(bare.processes()), "client": cpu_seconds(clients)}})
        answer_calls(app_port, specs)
        streams = run_clients("stream", app_port, specs, args, lambda clients: {"cpu": {
            "server": cpu_seconds(app.processes()), "database": cpu_seconds(database()),
            "client": cpu_seconds(clients)}, "metrics": scrape(), "threads": thread_cpu(worker)}, profile)
        time.sleep(1.0)  # the last sockets close after the stop
        ended = Counter({s.labels["reason"]: int(s.value) for f in text_string_to_metric_families(scrape())
                         if f.name == "callwright_voice_sessions" for s in f.samples
                         if s.name.endswith("_total") and s.labels.get("transport") == "stream"})
        names = thread_names(worker.pid) if PY_SPY.exists() else {}
    finally:
        for server in reversed(servers):
            server.stop()
        fake.stop()
        stop_orphaned_postgres(data_dir)
        shutil.rmtree(workdir, ignore_errors=True)

    (before, after), _ = (streams.pop("before"), streams.pop("after")), (echo.pop("before"), echo.pop("after"))
    frames = histogram(before["metrics"], after["metrics"], "callwright_voice_frame_seconds")
    turns = histogram(before["metrics"], after["metrics"], "callwright_voice_turn_seconds", transport="stream")
    server = {"frame": quantiles(frames), "frame_without_turns": quantiles(without(frames, turns)),
              "turn": quantiles(turns)}
    failures = echo["failures"] + streams["failures"]
    results = {
        "benchmark": "voice_streams",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "cpus": os.cpu_count(),
        "load_average_1m": {"start": round(load_before[0], 2), "end": round(os.getloadavg()[0], 2)},
        "sessions": args.sessions, "clients": args.clients, "window_s": args.window, "warmup_s": args.warmup,
        "answer_every_s": args.answer_every,
        "echo": echo, "streams": {k: v for k, v in streams.items() if k != "profile"}, "server_ms": server,
        "ratio": server["frame"].get("p99", 0.0) / max(echo["rtt_ms"]["p99"], 1e-9),
        "target_met": server["frame"].get("p99", math.inf) < TARGET_MS,
        "server_sessions": dict(ended),
        "server_threads": thread_split(before["threads"], after["threads"], names, args.window),
        "profile": streams.get("profile"),
        "failures": failures,
    }
    report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.output}")
    return 1 if failures or sum(ended.values()) < args.sessions else 0


if __name__ == "__main__":
    sys.exit(main())
