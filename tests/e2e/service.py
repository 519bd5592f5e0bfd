"""Runs ``callwright`` as child processes for the end-to-end tests: serve, wait, stop, operator CLI,
and the set-up steps against a running server (sign-up, approval by CLI, carrier credentials).

Only processes started here are ever signalled, by their pid (or their own process group). The
in-process flavour of the set-up steps is ``tests/support/setup.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.twilio.rest import FakeAccount

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0
CLI_TIMEOUT = 60.0
PASSWORD = "correct horse battery"


def callwright_executable() -> str:
    beside_python = Path(sys.executable).with_name("callwright")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("callwright")
    assert found, "the callwright console script is not installed (pip install -e .)"
    return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def base_env(**callwright: str) -> dict[str, str]:
    """The caller's environment without any inherited ``CALLWRIGHT_*`` value, plus the given ones."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLWRIGHT_")}
    env["CALLWRIGHT_LOG_LEVEL"] = "warning"
    env.update({f"CALLWRIGHT_{k.upper()}": v for k, v in callwright.items()})
    return env


def run_cli(env: Mapping[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [callwright_executable(), *args], env=dict(env), capture_output=True, text=True, timeout=CLI_TIMEOUT,
        stdin=subprocess.DEVNULL, cwd=cwd,
    )


class ServeProcess:
    """One ``callwright serve`` child; its output goes to a log file read back on failure."""

    def __init__(self, env: Mapping[str, str], args: Sequence[str], *, base_url: str, log_path: Path,
                 data_dir: Path | None) -> None:
        self.env = dict(env)
        self.base_url = base_url
        self.log_path = log_path
        self.data_dir = data_dir
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()/cleanup()
        self.process = subprocess.Popen(
            [callwright_executable(), "serve", *args], env=self.env, stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"callwright serve exited with {self.process.returncode}:\n{self.output()}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1.0, trust_env=False).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"callwright serve did not answer /healthz within {timeout:.0f} s:\n{self.output()}")

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=15.0, trust_env=False)

    def interrupt(self, timeout: float = STOP_TIMEOUT) -> int:
        """Ctrl-C: a graceful stop, which also stops the embedded PostgreSQL."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self._log.close()

    def crash(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGKILL to the whole process group: no shutdown code runs (the embedded PostgreSQL,
        a daemon of its own, keeps running and is attached to again by the next start)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=timeout)
        self._log.close()

    def stop_postgres(self) -> None:
        """Stop an embedded PostgreSQL left running by crashed processes."""
        self._stop_orphaned_postgres()

    def cleanup(self, timeout: float = STOP_TIMEOUT) -> None:
        """Finalizer: terminate, then kill the process group after a timeout."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout)
                self._stop_orphaned_postgres()
        self._log.close()

    def _stop_orphaned_postgres(self) -> None:
        # The embedded server daemonizes; after a kill nothing else would stop the one this child started.
        pid_file = self.data_dir / "pgdata" / "postmaster.pid" if self.data_dir else None
        if pid_file is None or not pid_file.exists():
            return
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGINT)  # PostgreSQL's fast shutdown
        except (ValueError, IndexError, ProcessLookupError, PermissionError):
            pass


@contextmanager
def offline_server(prefix: str, **settings: str) -> Iterator[ServeProcess]:
    """``callwright serve`` on a free port with a fresh data directory and the scripted agent
    (no ``ANTHROPIC_API_KEY``), stopped and removed afterwards. ``settings`` are more
    ``CALLWRIGHT_*`` values (``rate_limit_tiers=…``)."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"), **settings)
    env.pop("ANTHROPIC_API_KEY", None)
    process = ServeProcess(env, (), base_url=f"http://127.0.0.1:{port}", data_dir=workdir / "var",
                           log_path=workdir / "serve.log")
    try:
        process.wait_ready()
        yield process
    finally:
        process.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


def start(env: dict[str, str], port: int, workdir: Path, n: int) -> ServeProcess:
    """The ``n``-th ``callwright serve`` of a test on ``port``, ready; its log is ``serve-<n>.log``."""
    server = ServeProcess(env, (), base_url=f"http://127.0.0.1:{port}", data_dir=workdir / "var",
                          log_path=workdir / f"serve-{n}.log")
    server.wait_ready()
    return server


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def signup(http: httpx.Client, email: str) -> dict[str, Any]:
    """``POST /auth/signup``: the new tenant's ids and its initial key."""
    response = http.post("/auth/signup", json={"email": email, "password": PASSWORD})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def approve_with_cli(env: Mapping[str, str], email: str) -> None:
    done = run_cli(env, "admin", "approve", email)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{email}: approved"


def approved_key(server: ServeProcess, email: str) -> str:
    """Sign up ``email`` on the server, approve it with the operator CLI; its initial key's secret."""
    with server.client() as http:
        secret = signup(http, email)["secret"]
    approve_with_cli(server.env, email)
    return str(secret)


def use_carrier(server: ServeProcess, headers: dict[str, str], account: FakeAccount, caller: str) -> None:
    """Verify the fake carrier account's credentials and choose ``caller`` as the caller number."""
    with server.client() as http:
        assert http.post("/v1/providers/carrier/verify", headers=headers, json={
            "account_sid": account.sid, "auth_token": account.auth_token}).status_code == 200
        assert http.post("/v1/providers/select-number", json={"e164": caller}, headers=headers).status_code == 200
