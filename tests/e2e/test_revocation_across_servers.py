"""Two ``callwright serve`` processes on one database: a key revoked through one is refused by the
other within a second, although the other answers its requests from memory (docs/decisions.md,
the authenticated read)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port

pytestmark = pytest.mark.e2e


@pytest.fixture
def two_servers() -> Iterator[tuple[ServeProcess, ServeProcess]]:
    """The second attaches to the embedded PostgreSQL the first started in the shared data directory."""
    workdir = Path(tempfile.mkdtemp(prefix="callwright-e2e-"))
    data_dir = workdir / "var"
    started: list[ServeProcess] = []
    try:
        for n in range(2):
            port = free_port()
            server = ServeProcess(base_env(host="127.0.0.1", port=str(port), data_dir=str(data_dir)), (),
                                  base_url=f"http://127.0.0.1:{port}", data_dir=data_dir,
                                  log_path=workdir / f"serve-{n}.log")
            started.append(server)
            server.wait_ready()
        yield started[0], started[1]
    finally:
        for server in reversed(started):
            server.cleanup()
        if started:
            started[0].stop_postgres()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_key_revoked_through_one_server_is_refused_by_the_other_within_a_second(two_servers):
    first, second = two_servers
    owner = bearer(approved_key(first, "owner@example.com"))
    with first.client() as one, second.client() as two:
        victim = one.post("/auth/api-keys", headers=owner).json()
        for _ in range(3):  # the second server now answers this key from memory
            assert two.get("/v1/calls", params={"limit": 1}, headers=bearer(victim["secret"])).status_code == 200

        revoked = time.monotonic()
        assert one.delete(f"/auth/api-keys/{victim['key_id']}", headers=owner).status_code == 200
        while (answer := two.get("/auth/me", headers=bearer(victim["secret"]))).status_code == 200:
            assert time.monotonic() - revoked < 1.0, "the other server still accepts the revoked key"
            time.sleep(0.02)
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "api_key_revoked"
        assert time.monotonic() - revoked < 1.0

        # The owner's key, remembered by both, keeps working on both.
        assert one.get("/auth/me", headers=owner).status_code == two.get("/auth/me", headers=owner).status_code == 200
