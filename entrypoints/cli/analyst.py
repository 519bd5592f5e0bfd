"""``callwright admin analyst-role NAME [--tenant TENANT_ID]``: a PostgreSQL login for analysts
that reads the views of the analysts' schema and nothing else (docs/analytics-schema.md).

The password is generated here and printed once: it is never logged, and never sent to the
server as text (the role gets its SCRAM verifier). The connection example leaves it out, so that
it does not land in a shell's history.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Optional

import typer

PASSWORD_BYTES = 24  # 32 URL-safe characters


def analyst_role(
    name: Annotated[str, typer.Argument(help="Role name: lowercase letters, digits and _ (e.g. analyst_jo)")],
    tenant: Annotated[Optional[str], typer.Option(
        "--tenant", help="Restrict the role to this tenant (ten_...); without it the role sees every tenant")] = None,
) -> None:
    """Create (or update, with a new password) a read-only PostgreSQL login for the analysts' views."""
    import psycopg

    from entrypoints.bootstrap import resolve_database
    from entrypoints.cli.command_settings import command_settings, existing_settings
    from projections.analyst_views import AnalystRoleError, grant_analyst_role

    database = resolve_database(existing_settings(command_settings()))
    password = secrets.token_urlsafe(PASSWORD_BYTES)
    try:
        analytics = grant_analyst_role(database.conninfo(), database.schema, name, tenant, password)
    except AnalystRoleError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except psycopg.errors.UndefinedTable:
        typer.echo("error: the read models are not there yet: start the service (callwright serve or worker) "
                   "once on this database first", err=True)
        raise typer.Exit(1) from None
    except psycopg.errors.InsufficientPrivilege:
        typer.echo("error: the service's database role may not create roles here (it needs CREATEROLE, and "
                   "CREATE on the database for the analysts' schema)", err=True)
        raise typer.Exit(1) from None
    except psycopg.Error as exc:  # the server's message only: no connection string, no statement
        typer.echo(f"error: {exc.diag.message_primary or (str(exc).strip().splitlines() or [type(exc).__name__])[0]}",
                   err=True)
        raise typer.Exit(1) from None
    _print_role(database, name, tenant, analytics, password)


def _print_role(database: Any, name: str, tenant: str | None, analytics: str, password: str) -> None:
    typer.echo(f"role: {name}")
    typer.echo(f"tenant: {tenant or 'all tenants'}")
    typer.echo(f"schema: {analytics}")
    typer.echo(f"password: {password}  (shown once)")
    typer.echo(f'connect: psql "{connection_string(database, name)}"  (asks for the password)')


def connection_string(database: Any, name: str) -> str:
    """A libpq URL for the role on the service's database, without the password; the role's
    ``search_path`` already names the analysts' schema."""
    from urllib.parse import quote

    if str(database.host).startswith("/"):  # the embedded server's socket directory
        return f"postgresql://{quote(name)}@:{database.port}/{quote(database.dbname)}?host={quote(database.host)}"
    host = f"[{database.host}]" if ":" in str(database.host) else database.host
    return f"postgresql://{quote(name)}@{host}:{database.port}/{quote(database.dbname)}"
