"""The scaled run mode of ``compose.yaml`` as child processes, for end-to-end tests and benchmarks:
``api`` (``serve --no-followers``), ``worker`` (``worker --no-projections``, reactors fed from
Kafka), ``projector`` (``worker --no-reactors``) and ``relay``, against one PostgreSQL schema and
one Kafka broker.

Each child runs in a session of its own and writes stdout and stderr to its own log file; only
children started here are ever signalled, by their pid (``os.killpg`` for their own group). The
set-up steps against a running API (an approved tenant, a webhook endpoint, keyed simulated calls)
are at the end.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg

from tests.e2e.service import PASSWORD, base_env, callwright_executable, free_port, run_cli

ROLES: dict[str, tuple[str, ...]] = {
    "api": ("serve", "--no-followers"),
    "worker": ("worker", "--no-projections"),
    "projector": ("worker", "--no-reactors"),
    "relay": ("relay",),
}
STARTED = {"worker": "worker.starting", "projector": "worker.starting", "relay": "relay.starting"}
READY_TIMEOUT = 60.0
GRACE_SECONDS = 20.0  # CALLWRIGHT_SHUTDOWN_GRACE_SECONDS' default
STOP_TIMEOUT = GRACE_SECONDS + 10.0
OBSERVER = "topology-observer"  # this side's application_name: not "callwright:…"


def tree(pid: int) -> list[psutil.Process]:
    """A process and its descendants (granian's worker processes, for ``api``); empty once gone."""
    try:
        parent = psutil.Process(pid)
        return [parent, *parent.children(recursive=True)]
    except psutil.Error:
        return []


def cpu_seconds(processes: Iterable[psutil.Process]) -> dict[int, float]:
    """User plus system CPU seconds by pid (processes gone meanwhile are left out)."""
    seconds: dict[int, float] = {}
    for process in processes:
        try:
            times = process.cpu_times()
            seconds[process.pid] = times.user + times.system
        except psutil.Error:
            pass
    return seconds


@dataclass(eq=False)
class Proc:
    """One child: its role, its n-th place among the role's copies, and its log."""

    role: str
    n: int
    popen: subprocess.Popen[bytes]
    log_path: Path
    port: int | None = None
    stopped: bool = False  # by the test: its exit is expected
    _log: Any = field(default=None, repr=False)
    _read: int = field(default=0, repr=False)
    _partial: bytes = field(default=b"", repr=False)
    _lines: list[dict[str, Any]] = field(default_factory=list, repr=False)
    _raw: list[str] = field(default_factory=list, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def name(self) -> str:
        return f"{self.role}-{self.n} (pid {self.pid})"

    @property
    def base_url(self) -> str:
        assert self.port is not None, f"{self.name} serves no HTTP"
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def pids(self) -> set[int]:
        return {process.pid for process in tree(self.pid)}

    def processes(self) -> list[psutil.Process]:
        return tree(self.pid)

    def _refresh(self) -> None:
        """Parse what the log gained since the last look; a line that is not a JSON object is
        kept aside (``not_json``)."""
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(self._read)
                chunk = handle.read()
        except FileNotFoundError:
            return
        self._read += len(chunk)
        *complete, self._partial = (self._partial + chunk).split(b"\n")
        for raw in complete:
            text = raw.decode(errors="replace")
            if not text.strip():
                continue
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                self._lines.append(parsed)
            else:
                self._raw.append(text)

    def logs(self) -> list[dict[str, Any]]:
        self._refresh()
        return list(self._lines)

    def not_json(self) -> list[str]:
        self._refresh()
        return list(self._raw)

    def tail(self, lines: int = 40, width: int = 400) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        last = [line if len(line) <= width else line[:width] + " …" for line in text.splitlines()[-lines:]]
        state = "running" if self.alive else f"exited {self.popen.returncode}"
        return f"--- {self.name}, {state}, last {len(last)} lines of {self.log_path} ---\n" + "\n".join(last)


class Topology:
    """Starts, stops and observes the roles; ``close()`` stops every child it started."""

    def __init__(self, database_url: str, kafka_bootstrap: str, workdir: Path,
                 env_extra: Mapping[str, str] | None = None) -> None:
        self.workdir = workdir
        self.database_url = database_url
        self.procs: list[Proc] = []
        self._counts: Counter[str] = Counter()
        self.env = base_env(database_url=database_url, kafka_bootstrap=kafka_bootstrap, log_level="info",
                            log_format="json", secret_key=secrets.token_urlsafe(48), host="127.0.0.1",
                            data_dir=str(workdir / "cli-var"))
        self.env.update(env_extra or {})
        self._observer: psycopg.Connection[Any] | None = None

    # --- processes ------------------------------------------------------------------------------

    def start(self, role: str, n: int = 1, *, wait: bool = True) -> list[Proc]:
        """``n`` more copies of ``role``, all started before any is waited for (as compose
        starts them), then waited for unless ``wait`` is false (``wait_ready``)."""
        started = [self._spawn(role) for _ in range(n)]
        if wait:
            self.wait_ready(started)
        return started

    def _spawn(self, role: str) -> Proc:
        self._counts[role] += 1
        n = self._counts[role]
        data_dir = self.workdir / f"{role}-{n}"
        data_dir.mkdir(parents=True, exist_ok=True)
        env = {**self.env, "CALLWRIGHT_DATA_DIR": str(data_dir)}
        port = None
        if role == "api":
            port = free_port()
            env["CALLWRIGHT_PORT"] = str(port)
        log_path = self.workdir / f"{role}-{n}.log"
        log = open(log_path, "ab")  # noqa: SIM115 - closed when the child is reaped (_reap, close)
        popen = subprocess.Popen([callwright_executable(), *ROLES[role]], env=env, stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        proc = Proc(role, n, popen, log_path, port, _log=log)
        self.procs.append(proc)
        return proc

    def wait_ready(self, procs: Iterable[Proc], timeout: float = READY_TIMEOUT) -> None:
        """Every ``api`` among ``procs`` answers ``/readyz`` with 200, every other one has logged
        that it started (after its set-up: tables, consumers), and none of ``procs`` exited."""
        procs = list(procs)
        waiting = list(procs)
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=1.0, trust_env=False) as http:
            while True:
                exited = [proc for proc in procs if not proc.alive]
                assert not exited, "exited while starting:\n" + self.tails(exited)
                for proc in list(waiting):
                    if proc.role != "api":
                        if any(line.get("event") == STARTED[proc.role] for line in proc.logs()):
                            waiting.remove(proc)
                        continue
                    try:
                        if http.get(f"{proc.base_url}/readyz").status_code == 200:
                            waiting.remove(proc)
                    except httpx.TransportError:
                        pass
                if not waiting:
                    return
                assert time.monotonic() < deadline, (
                    f"not ready within {timeout:.0f} s: {[p.name for p in waiting]}\n" + self.tails(procs))
                time.sleep(0.2)

    def up(self, counts: Mapping[str, int], timeout: float = READY_TIMEOUT) -> list[str]:
        """Every role's copies at once, as ``docker compose up`` starts them, until all are ready
        within ``timeout``. A copy that exits meanwhile is started again (compose's ``restart:
        unless-stopped``); what each such exit said is returned."""
        started = [proc for role, n in counts.items() for proc in self.start(role, n, wait=False)]
        exits: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            for proc in [p for p in started if not p.alive and not p.stopped]:
                exits.append(f"{proc.name} exited with {proc.popen.returncode} while starting:\n"
                             + proc.tail(12, 300))
                proc.stopped = True
                self._reap(proc)
                started.append(self.start(proc.role, wait=False)[0])
            try:
                self.wait_ready([p for p in started if p.alive], timeout=max(0.5, deadline - time.monotonic()))
                return exits
            except AssertionError as exc:
                if time.monotonic() > deadline:
                    raise AssertionError(f"{len(exits)} exits while starting, each followed by a restart:\n"
                                         + "\n".join(exits) + f"\n\n{exc}") from None

    def live(self, role: str | None = None) -> list[Proc]:
        return [proc for proc in self.procs if proc.alive and (role is None or proc.role == role)]

    def kill(self, proc: Proc) -> None:
        """SIGKILL to the child's whole process group: no shutdown code runs (a lost machine)."""
        proc.stopped = True
        members = proc.processes()
        if proc.popen.poll() is None:  # not reaped: the group is still the child's
            _killpg(proc.pid, signal.SIGKILL)
        proc.popen.wait(timeout=STOP_TIMEOUT)
        self._reap(proc, members)

    def terminate(self, proc: Proc, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM to the child (as ``docker stop`` sends it); its exit code, or None when it
        had not exited within ``timeout`` (it is then killed)."""
        proc.stopped = True
        members = proc.processes()
        proc.popen.send_signal(signal.SIGTERM)
        try:
            code: int | None = proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
            _killpg(proc.pid, signal.SIGKILL)  # still running, so not reaped: its own group
            proc.popen.wait(timeout=STOP_TIMEOUT)
        self._reap(proc, members)
        return code

    def restart(self, proc: Proc, *, how: str = "kill", wait: bool = True) -> Proc:
        """Stop ``proc`` (``kill`` or ``terminate``) if it runs, then start a copy of its role."""
        if proc.alive and how == "kill":
            self.kill(proc)
        elif proc.alive:
            self.terminate(proc)
        return self.start(proc.role, wait=wait)[0]

    def _reap(self, proc: Proc, members: Iterable[psutil.Process] = ()) -> None:
        """Kill what the child left behind of the processes it had (none, normally: psutil refuses
        a pid that was reused since), and close its log."""
        for member in members:
            try:
                if member.pid != proc.pid and member.is_running():
                    member.kill()
            except psutil.Error:
                pass
        if proc._log is not None:
            proc._log.close()
            proc._log = None

    def unexpected_exits(self) -> list[Proc]:
        return [proc for proc in self.procs if not proc.stopped and not proc.alive]

    def close(self) -> None:
        """SIGTERM to every child still running, then SIGKILL to the groups of those that did
        not exit within the grace."""
        running = [(proc, proc.processes()) for proc in self.live()]
        for proc, _ in running:
            proc.stopped = True
            proc.popen.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for proc, members in running:
            try:
                proc.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _killpg(proc.pid, signal.SIGKILL)  # still running, so not reaped: its own group
                proc.popen.wait(timeout=STOP_TIMEOUT)
            self._reap(proc, members)
        for proc in self.procs:
            self._reap(proc)
        if self._observer is not None:
            self._observer.close()
            self._observer = None

    # --- logs -----------------------------------------------------------------------------------

    def logs(self, proc: Proc) -> list[dict[str, Any]]:
        return proc.logs()

    def tails(self, procs: Iterable[Proc] | None = None, lines: int = 40, width: int = 400) -> str:
        """The last ``lines`` of each child's log (of every child by default), each cut at ``width``."""
        chosen = self.procs if procs is None else list(dict.fromkeys(procs))
        return "\n".join(proc.tail(lines, width) for proc in chosen)

    def leader_of(self, event: str, field_name: str, value: str, role: str | None = None) -> Proc | None:
        """The live process whose log last said it leads (``event`` with ``field_name`` = ``value``,
        e.g. ``follower.leading``/``follower``/``calls_list_v1``); None when no live one says so."""
        best: tuple[str, int, Proc] | None = None
        for proc in self.live(role):
            for index, line in enumerate(proc.logs()):
                if line.get("event") == event and line.get(field_name) == value:
                    stamp = (str(line.get("timestamp", "")), index, proc)
                    if best is None or stamp[:2] > best[:2]:
                        best = stamp
        return best[2] if best else None

    def wait_leader(self, event: str, field_name: str, value: str, role: str | None = None,
                    timeout: float = 30.0) -> Proc | None:
        deadline = time.monotonic() + timeout
        while (leader := self.leader_of(event, field_name, value, role)) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        return leader

    # --- the database, as seen from PostgreSQL ------------------------------------------------------

    def observer(self) -> psycopg.Connection[Any]:
        """This side's own connection (its application_name is not callwright's)."""
        if self._observer is None or self._observer.closed:
            from adapters.postgres.database import DatabaseConfig

            conninfo = DatabaseConfig.from_url(self.database_url).conninfo()
            self._observer = psycopg.connect(conninfo, autocommit=True, application_name=OBSERVER)
        return self._observer

    def connections(self) -> Counter[tuple[str, int]]:
        """``pg_stat_activity`` rows whose application_name is ``callwright:ROLE:PID``, counted by
        (ROLE, PID)."""
        rows = self.observer().execute(
            "SELECT application_name, count(*) FROM pg_stat_activity "
            "WHERE application_name LIKE 'callwright:%%' GROUP BY 1").fetchall()
        counted: Counter[tuple[str, int]] = Counter()
        for name, count in rows:
            _, role, pid = (name.split(":") + ["", ""])[:3]
            counted[(role, int(pid) if pid.isdigit() else -1)] += count
        return counted

    def owners(self) -> dict[int, Proc]:
        """Every pid of the live children's process trees, with its child (one scan of the
        process table, however many children)."""
        parents: dict[int, int] = {}
        for process in psutil.process_iter(["ppid"]):
            parents[process.pid] = process.info["ppid"]
        roots = {proc.pid: proc for proc in self.live()}
        owned: dict[int, Proc] = {}
        for pid in parents:
            seen, current = set(), pid
            while current and current not in roots and current not in seen:
                seen.add(current)
                current = parents.get(current, 0)
            if current in roots:
                owned[pid] = roots[current]
        return owned

    def snapshot(self, owners: Mapping[int, Proc] | None = None,
                 ports: bool = True) -> list[tuple[int, str, Proc | None, int | None]]:
        """Every client backend of the server: (backend pid, application_name, the child it is
        connected from by its TCP client port, else None, the pid its application_name names, else
        None). ``owners``: a recent ``owners()``; ``ports=False`` leaves the third field None."""
        from adapters.postgres.database import DatabaseConfig

        server_port = DatabaseConfig.from_url(self.database_url).port
        owner = self.owners() if owners is None else owners
        by_port: dict[int, Proc] = {}
        for pid, proc in owner.items() if ports else ():
            try:
                sockets = psutil.Process(pid).net_connections(kind="tcp")
            except psutil.Error:
                continue
            by_port.update({conn.laddr.port: proc for conn in sockets
                            if conn.raddr and conn.raddr.port == server_port and conn.laddr})
        rows = self.observer().execute(
            "SELECT pid, client_port, application_name FROM pg_stat_activity "
            "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()").fetchall()
        found = []
        for backend, port, name in rows:
            parts = (name or "").split(":")
            named = int(parts[2]) if len(parts) == 3 and parts[0] == "callwright" and parts[2].isdigit() else None
            found.append((backend, name or "", by_port.get(port) if port is not None else None, named))
        return found

    def backends(self) -> dict[Proc, list[tuple[int, str]]]:
        """Every server backend connected from one of the children (matched by the client's TCP
        port, whatever it calls itself): (backend pid, application_name) by child."""
        found: dict[Proc, list[tuple[int, str]]] = {}
        for backend, name, proc, _ in self.snapshot():
            if proc is not None:
                found.setdefault(proc, []).append((backend, name))
        return found

    def lock_holder(self, name: str) -> Proc | None:
        """The child whose session holds the advisory lock ``name`` (adapters/postgres/advisory_lock.py)."""
        from adapters.postgres.advisory_lock import lock_key

        key = lock_key(name) & 0xFFFFFFFFFFFFFFFF
        rows = self.observer().execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = %s AND objid = %s",
            (key >> 32, key & 0xFFFFFFFF)).fetchall()
        holders = {row[0] for row in rows}
        for proc, backends in self.backends().items():
            if holders & {backend for backend, _ in backends}:
                return proc
        return None

    # --- the operator CLI -------------------------------------------------------------------------

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(self.env, *args)


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# --- set-up against a running API ---------------------------------------------------------------------

SIMULATED_AT = "2026-12-01T10:00:00Z"  # inside London's call hours: the calls run the same at any hour
OUTCOME_SCHEMA = {"confirmed": {"type": "boolean"},
                  "channel": {"type": "enum", "values": ["phone", "email", "sms"]}}
SIMULATED_CALL: dict[str, Any] = {
    "objective": "Confirm the appointment and how to reach the patient",
    "consent_type": "prior_express",
    "mode": "simulated",
    "outcome_schema": OUTCOME_SCHEMA,
    "simulation": {"at": SIMULATED_AT, "facts": {"confirmed": True, "channel": "email"}},
}
BATCH_MAX = 200


def client(proc: Proc, key: str | None = None, timeout: float = 30.0) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=proc.base_url, headers=headers, timeout=timeout, trust_env=False)


def approved_tenant(topology: Topology, api: Proc, email: str) -> str:
    """Sign ``email`` up through ``api``, approve it with the operator CLI; its initial key's secret."""
    with client(api) as http:
        response = http.post("/auth/signup", json={"email": email, "password": PASSWORD})
        assert response.status_code == 201, response.text
        key = str(response.json()["secret"])
    done = topology.cli("admin", "approve", email)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{email}: approved", done.stdout
    return key


def webhook_endpoint(http: httpx.Client, url: str) -> dict[str, Any]:
    """``POST /v1/webhooks`` for ``call.completed``: the endpoint (``id``, ``secret``)."""
    response = http.post("/v1/webhooks", json={"url": url, "events": ["call.completed"]})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def destinations(count: int, first: int = 0) -> list[str]:
    """Distinct London numbers (+44 20 7183 nnnn), inside call hours at ``SIMULATED_AT``."""
    assert first + count <= 10_000
    return [f"+44207183{i:04d}" for i in range(first, first + count)]


@dataclass
class Create:
    """One keyed create: ``POST /v1/calls`` (one number) or ``/v1/calls/batch`` (several)."""

    key: str
    to: list[str]
    call_ids: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return "/v1/calls/batch" if len(self.to) > 1 else "/v1/calls"

    def body(self) -> dict[str, Any]:
        if len(self.to) > 1:
            return {**SIMULATED_CALL, "items": [{"to": to} for to in self.to]}
        return {**SIMULATED_CALL, "to": self.to[0]}

    def send(self, http: httpx.Client) -> list[str]:
        """The call ids the API answers (every item accepted, or an assertion fails)."""
        response = http.post(self.path, json=self.body(), headers={"Idempotency-Key": self.key})
        if len(self.to) > 1:
            assert response.status_code == 207, response.text
            answer = response.json()
            assert answer["rejected"] == 0, answer
            return [item["call_id"] for item in answer["items"]]
        assert response.status_code == 201, response.text
        return [response.json()["call_id"]]


def keyed_creates(tag: str, count: int, batch: int = BATCH_MAX) -> list[Create]:
    """``count`` calls as batches of at most ``batch`` (a lone call as a single create), each
    with an Idempotency-Key of its own."""
    numbers = destinations(count)
    return [Create(f"{tag}-{start}", numbers[start:start + batch]) for start in range(0, count, batch)]


def send_all(http: httpx.Client, creates: Iterable[Create]) -> list[str]:
    """Send each create and keep its call ids; every call id sent, in order."""
    ids: list[str] = []
    for create in creates:
        create.call_ids = create.send(http)
        ids.extend(create.call_ids)
    return ids


def page_all(http: httpx.Client, path: str, params: Mapping[str, Any] | None = None,
             limit: int = 200) -> list[dict[str, Any]]:
    """Every row of a cursor-paged list (``GET /v1/calls``, ``/v1/webhooks/{id}/deliveries``)."""
    rows: list[dict[str, Any]] = []
    query: dict[str, Any] = {**(params or {}), "limit": limit}
    for _ in range(10_000):
        response = http.get(path, params=query)
        assert response.status_code == 200, response.text
        page = response.json()
        rows.extend(page["data"])
        if not page.get("next_cursor"):
            return rows
        query["cursor"] = page["next_cursor"]
    raise AssertionError(f"{path} did not end after 10,000 pages")


def total(http: httpx.Client, status: str | None = None) -> int:
    """``GET /v1/calls`` total, of one status or of all."""
    params: dict[str, Any] = {"limit": 1, **({"status": status} if status else {})}
    response = http.get("/v1/calls", params=params)
    assert response.status_code == 200, response.text
    return int(response.json()["total"])


@dataclass
class Scaled:
    """A fresh schema (nothing created in it yet), a fresh broker and a webhook receiver, and the
    topology of processes the test starts on them."""

    db: Any
    broker: Any
    receiver: Any
    topology: Topology


@contextmanager
def scaled_run(request: Any, prefix: str, env: dict[str, str]) -> Iterator[Scaled]:
    """What a topology test runs on, stopped and removed afterwards; the processes' logs are kept
    (and their folder printed) when the test failed."""
    from tests.fakes.receiver import Receiver
    from tests.kafka_support import started_broker
    from tests.postgres import drop_schema, find_server, fresh_schema

    server, _ = find_server()
    db = fresh_schema(server)
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    broker = started_broker(workdir / "tansu.log")
    receiver = Receiver()
    topology = Topology(db.to_url(), broker.bootstrap, workdir, env)
    failed_before = request.session.testsfailed
    try:
        yield Scaled(db, broker, receiver, topology)
    finally:
        topology.close()
        receiver.close()
        broker.stop()
        drop_schema(db)
        if request.session.testsfailed > failed_before:
            print(f"\nthe processes' logs are kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

