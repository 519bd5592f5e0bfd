"""``callwright`` command line: serve, worker and operator commands.

Every command reads ``CALLWRIGHT_DATA_DIR``/``CALLWRIGHT_HOST``/``CALLWRIGHT_PORT`` (and
``CALLWRIGHT_DATABASE_URL``), so a CLI command reaches the same database as a running server.
Only ``serve`` creates a data directory; the others refuse to run without one (or a database URL).
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer

warnings.filterwarnings("ignore", module="platformdirs")

from entrypoints.cli.analyst import analyst_role
from entrypoints.cli.command_settings import command_settings, existing_settings
from entrypoints.cli.audit import audit
from entrypoints.cli.calls import calls
from entrypoints.cli.keys import keys
from entrypoints.cli.mcp import mcp
from entrypoints.cli.numbers import numbers
from entrypoints.cli.rebuild import rebuild_projection
from entrypoints.cli.webhooks import webhooks

T = TypeVar("T")


def _logged(command: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A long-running command whose body raises logs one ``process.failed`` line (in the service's
    log format) and exits with 1, instead of a multi-line traceback; the command line's own exits
    and usage errors pass through. Goes under ``@app.command()`` (typer reads the wrapped signature)."""

    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(body)
        def run(*args: Any, **kwargs: Any) -> None:
            try:
                body(*args, **kwargs)
            except (typer.Exit, typer.Abort, typer.exceptions.TyperException):  # exits and usage errors
                raise
            except Exception as exc:
                from entrypoints.logging import command_failed

                command_failed(command, exc)
                raise SystemExit(1) from None

        return run

    return decorate


# No local variables in tracebacks: they would print API keys, passwords and database URLs.
app = typer.Typer(help="callwright: voice calls with typed outcomes.", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_show_locals=False)
admin = typer.Typer(help="Operator commands against the service's database.", no_args_is_help=True)
app.add_typer(admin, name="admin")
admin.command("analyst-role")(analyst_role)
admin.command("rebuild-projection")(rebuild_projection)
app.add_typer(calls, name="calls")
app.add_typer(numbers, name="numbers")
app.add_typer(webhooks, name="webhooks")
app.add_typer(keys, name="keys")
app.add_typer(audit, name="audit")
app.command("mcp")(mcp)

HostOpt = Annotated[Optional[str], typer.Option("--host", help="Address to listen on [env CALLWRIGHT_HOST]")]
PortOpt = Annotated[Optional[int], typer.Option("--port", help="Port to listen on [env CALLWRIGHT_PORT]")]
DataDirOpt = Annotated[
    Optional[Path], typer.Option("--data-dir", help="Embedded database and local files [env CALLWRIGHT_DATA_DIR]")
]


@app.command()
@_logged("serve")
def serve(
    host: HostOpt = None,
    port: PortOpt = None,
    data_dir: DataDirOpt = None,
    workers: Annotated[Optional[int], typer.Option(
        "--workers", min=1, help="HTTP worker processes [env CALLWRIGHT_HTTP_WORKERS, default 1]")] = None,
    followers: Annotated[Optional[bool], typer.Option(
        "--followers/--no-followers", help="Lead the views, reactors and periodic jobs here; with --no-followers "
        "`callwright worker` processes run them [env CALLWRIGHT_HTTP_FOLLOWERS, default on]")] = None,
) -> None:
    """Run the HTTP service and every worker in one process (embedded PostgreSQL by default)."""
    from granian import Granian
    from granian.constants import Interfaces
    from granian.log import LogLevels

    from entrypoints.bootstrap import resolve_database
    from entrypoints.logging import configure, granian_log_config, level_name

    settings = command_settings(host, port, data_dir).with_overrides(http_workers=workers, http_followers=followers)
    configure(settings.log_level, settings.log_format)
    import structlog

    log = structlog.get_logger("callwright.serve")
    database = resolve_database(settings)  # starts the embedded server when no URL is set
    os.environ["CALLWRIGHT_DATABASE_URL"] = database.to_url()
    os.environ["CALLWRIGHT_DATA_DIR"] = str(settings.data_dir.resolve())
    os.environ["CALLWRIGHT_HOST"] = settings.host
    os.environ["CALLWRIGHT_PORT"] = str(settings.port)
    os.environ["CALLWRIGHT_HTTP_FOLLOWERS"] = "1" if settings.http_followers else "0"
    log.info("serve.starting", url=f"http://{settings.host}:{settings.port}",
             docs=f"http://{settings.host}:{settings.port}/schema", data_dir=str(settings.data_dir.resolve()),
             embedded_database=settings.database_url is None, workers=settings.http_workers,
             followers=settings.http_followers)
    Granian(
        "entrypoints.http.app:create_app_from_env",
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        workers=settings.http_workers,
        factory=True,
        log_access=False,  # our http.request line (entrypoints/http/context.py) is the access log, in JSON
        log_level=LogLevels(level_name(settings.log_level)),  # granian's own lines, in the service's format
        log_dictconfig=granian_log_config(settings.log_level, settings.log_format),
    ).serve()


@app.command()
@_logged("worker")
def worker(
    data_dir: DataDirOpt = None,
    projections: Annotated[bool, typer.Option("--projections/--no-projections",
                                              help="Keep the read models up to date")] = True,
    reactors: Annotated[bool, typer.Option("--reactors/--no-reactors",
                                           help="Run the reactors (the call runner)")] = True,
) -> None:
    """Run the projections and the reactors without the HTTP service, until interrupted.

    Reactors follow the notification log, or consume from Kafka when CALLWRIGHT_KAFKA_BOOTSTRAP is set.
    A projector is `worker --no-reactors`.
    """
    import structlog

    from entrypoints.bootstrap import bootstrap_worker
    from entrypoints.logging import configure
    from entrypoints.workers.kafka_mode import KafkaSettings

    settings = existing_settings(command_settings(data_dir=data_dir))
    configure(settings.log_level, settings.log_format)
    kafka = KafkaSettings.from_env()
    container, fed = bootstrap_worker(settings, kafka, projections=projections, reactors=reactors)
    structlog.get_logger("callwright.worker").info(
        "worker.starting", projections=sorted(container.projections),
        reactors_from_log=sorted(container.reactors), reactors_from_kafka=sorted(fed.sources),
        kafka=kafka.bootstrap if kafka and fed.sources else None)
    _run_until_signalled(lambda: (container.start_projections(), fed.start()),
                         lambda: (fed.stop(), container.close()))


@app.command()
@_logged("relay")
def relay(data_dir: DataDirOpt = None) -> None:
    """Publish every event to Kafka (CALLWRIGHT_KAFKA_BOOTSTRAP) until interrupted.

    One relay per application leads across processes; other copies stand by.
    """
    import structlog

    from entrypoints.bootstrap import bootstrap_relay
    from entrypoints.logging import configure
    from entrypoints.workers.kafka_mode import KafkaSettings

    settings = command_settings(data_dir=data_dir)
    configure(settings.log_level, settings.log_format)
    kafka = KafkaSettings.from_env()
    if kafka is None:
        typer.echo("error: set CALLWRIGHT_KAFKA_BOOTSTRAP (host:port) to relay events to Kafka", err=True)
        raise typer.Exit(2)
    container, workers = bootstrap_relay(existing_settings(settings), kafka)
    structlog.get_logger("callwright.relay").info(
        "relay.starting", kafka=kafka.bootstrap,
        topics=[kafka.topic(app) for app in (container.accounts, container.calling)],
        hint="one relay per application leads; other copies stand by")
    _run_until_signalled(workers.start, lambda: (workers.stop(), container.close()))


def _run_until_signalled(start: Callable[[], object], stop: Callable[[], object]) -> None:
    """``start``, then wait for SIGTERM or SIGINT, then ``stop`` (also when ``start`` failed)."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    try:
        start()
        stopping.wait()
    finally:
        stop()


def _on_accounts(command: Callable[[Any], T]) -> T:
    """Run one operator command on the accounts of the server's database (no followers); an
    application error is printed and exits 1."""
    from application.errors import ApplicationError
    from entrypoints.bootstrap import bootstrap_cli
    from entrypoints.logging import configure

    settings = existing_settings(command_settings())
    configure("warning", "console")
    container = bootstrap_cli(settings)
    try:
        return command(container.accounts)
    except ApplicationError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(1) from exc
    finally:
        container.close()


@admin.command("create-admin")
def create_admin(
    email: Annotated[str, typer.Option("--email", help="The operator's e-mail address")],
    password: Annotated[str, typer.Option("--password", prompt=True, hide_input=True, confirmation_prompt=True)],
    name: Annotated[Optional[str], typer.Option("--name")] = None,
) -> None:
    """Create an operator account (approved, with admin rights) and print its first API key (``secret``)."""
    from application.accounts.registration import register

    done = _on_accounts(lambda accounts: register(accounts, email=email, password=password, name=name, admin=True,
                                                  by="cli"))
    typer.echo(f"user_id: {done.user.user_id}")
    typer.echo(f"tenant_id: {done.tenant.tenant_id}")
    typer.echo(f"key_id: {done.key.key_id}")
    typer.echo(f"prefix: {done.key.aggregate.prefix}")
    typer.echo(f"secret: {done.key.secret}  (shown once)")
    typer.echo(f"api_key: {done.key.secret}  (deprecated: the same as secret, printed until the next release)")


@admin.command("approve")
def approve(email: Annotated[str, typer.Argument(help="E-mail address of the account to approve")]) -> None:
    """Approve an account that is pending review."""
    from application.accounts.administration import approve_email

    view = _on_accounts(lambda accounts: approve_email(accounts, email, by="cli"))
    typer.echo(f"{view.user.email}: {view.tenant.verification_status}")


@app.command()
def demo() -> None:
    """Run one simulated call end to end (offline unless ANTHROPIC_API_KEY is set) and print it.

    Needs no server and no data directory: it runs in memory and leaves no files behind."""
    from entrypoints.cli.demo import run_demo

    run_demo()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
