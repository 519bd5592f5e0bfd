"""The CLI where nothing is set up: no data directory, no server, a pipe or a terminal
(issue 12 item 4). Only ``serve`` creates a data directory; the client commands fail in one line."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.service import CLI_TIMEOUT, base_env, callwright_executable, free_port, run_cli

pytestmark = pytest.mark.e2e

CSV = b'call_id,status,transcript\r\ncll_1,completed,"agent: hello\r\ncallee: hi"\r\ncll_2,failed,\r\n'


def client_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in base_env().items() if k not in ("OPENPHN_API_KEY", "NO_COLOR")}
    return {**env, **extra}


@pytest.mark.parametrize("command", [("admin", "approve", "dev@example.com"), ("worker",),
                                     ("admin", "create-admin", "--email", "ops@example.com", "--password", "x" * 12)])
def test_a_command_other_than_serve_creates_no_data_directory(tmp_path: Path, command: tuple[str, ...]) -> None:
    done = run_cli(client_env(), *command, cwd=tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"no callwright data directory at {tmp_path / 'var'}" in done.stderr
    assert "CALLWRIGHT_DATA_DIR" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no ./var, no secret.key


def test_the_data_directory_is_looked_for_where_callwright_data_dir_points(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"

    done = run_cli(client_env(CALLWRIGHT_DATA_DIR=str(elsewhere)), "admin", "approve", "dev@example.com", cwd=tmp_path)

    assert done.returncode == 1
    assert f"no callwright data directory at {elsewhere}" in done.stderr
    assert not elsewhere.exists()


def test_demo_runs_from_any_folder_and_leaves_no_files(tmp_path: Path) -> None:
    done = run_cli(client_env(), "demo", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert "[completed]" in done.stdout
    assert list(tmp_path.iterdir()) == []
    assert "\x1b[" not in done.stdout + done.stderr  # piped: plain text


def run_on_terminal(env: dict[str, str], cwd: Path, *args: str) -> str:
    """The command's output as a terminal shows it (stdout and stderr on one pseudo-terminal)."""
    master, slave = os.openpty()
    process = subprocess.Popen([callwright_executable(), *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=slave, stderr=slave)
    os.close(slave)
    output = b""
    try:
        while chunk := _read(master):
            output += chunk
        assert process.wait(timeout=CLI_TIMEOUT) == 0, output
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    return output.decode(errors="replace")


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the child closed the terminal
        return b""


def test_colours_only_on_a_terminal_without_no_color(tmp_path: Path) -> None:
    coloured = run_on_terminal(client_env(), tmp_path, "demo")
    plain = run_on_terminal(client_env(NO_COLOR="1"), tmp_path, "demo")

    assert "\x1b[1m" in coloured
    assert "[completed]" in plain and "\x1b[" not in plain


def test_calls_against_a_server_that_is_not_running_is_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # bound, then released: nothing listens there

    done = run_cli(client_env(OPENPHN_API_KEY="sk_live_x", CALLWRIGHT_BASE_URL=url), "calls", "list", cwd=tmp_path)

    assert done.returncode == 1
    assert done.stderr == f"cannot reach {url}: is callwright serve running?\n"


class _FakeServer(BaseHTTPRequestHandler):
    seen_keys: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        self.seen_keys.append(self.headers.get("Authorization", ""))
        body, kind = (CSV, "text/csv") if self.path.startswith("/v1/calls/export.csv") else (
            b'{"data": [], "total": 0}', "application/json")
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake_server() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeServer)
    _FakeServer.seen_keys = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _FakeServer.seen_keys
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("keys", "sent"), [
    ({"CALLWRIGHT_API_KEY": "sk_live_a"}, "sk_live_a"),
    ({"OPENPHN_API_KEY": "sk_live_b"}, "sk_live_b"),
    ({"CALLWRIGHT_API_KEY": "sk_live_a", "OPENPHN_API_KEY": "sk_live_b"}, "sk_live_a"),  # CALLWRIGHT_ wins
])
def test_the_key_comes_from_callwright_api_key_or_openphn_api_key(tmp_path, fake_server, keys, sent) -> None:
    url, seen = fake_server

    done = run_cli(client_env(CALLWRIGHT_BASE_URL=url, **keys), "calls", "list", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert seen == [f"Bearer {sent}"]


def test_calls_without_a_key_names_both_variables(tmp_path: Path) -> None:
    done = run_cli(client_env(), "calls", "list", cwd=tmp_path)

    assert done.returncode == 2
    assert "CALLWRIGHT_API_KEY" in done.stderr and "OPENPHN_API_KEY" in done.stderr


def test_export_to_a_file_says_how_many_rows_it_wrote_and_where(tmp_path: Path, fake_server) -> None:
    url, _ = fake_server
    env = client_env(CALLWRIGHT_API_KEY="sk_live_a", CALLWRIGHT_BASE_URL=url)

    done = run_cli(env, "calls", "export", "-o", "calls.csv", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert (tmp_path / "calls.csv").read_bytes() == CSV
    assert done.stdout == f"wrote 2 rows to {tmp_path / 'calls.csv'}\n"  # a quoted line break is not a row
    to_stdout = run_cli(env, "calls", "export", cwd=tmp_path)  # '-': the CSV alone, nothing else
    assert to_stdout.returncode == 0 and to_stdout.stdout.endswith("cll_2,failed,\n")
