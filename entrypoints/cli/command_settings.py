"""The settings a ``callwright`` command runs with: the environment's, and for every command but
``serve`` the proof that a server's data is there (nothing is created)."""

from __future__ import annotations

from pathlib import Path

import typer

from entrypoints.settings import Settings


def command_settings(host: str | None = None, port: int | None = None, data_dir: Path | None = None) -> Settings:
    return Settings.from_env(host=host, port=port, data_dir=data_dir)


def existing_settings(settings: Settings) -> Settings:
    """The settings of a command that uses a server's data, not ``serve``: without a database URL
    the data directory must hold the embedded database already; nothing is created here."""
    if settings.database_url or (settings.data_dir / "pgdata").is_dir():
        return settings
    path = settings.data_dir.resolve()
    typer.echo(f"error: no callwright data directory at {path} (no embedded database in {path / 'pgdata'}).\n"
               "Run this command where `callwright serve` keeps its data, or point it there with "
               "CALLWRIGHT_DATA_DIR=/path/to/var (or set CALLWRIGHT_DATABASE_URL to the server's PostgreSQL).",
               err=True)
    raise typer.Exit(1)
