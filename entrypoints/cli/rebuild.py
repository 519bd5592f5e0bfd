"""``callwright admin rebuild-projection NAME``: one read model projected again from the event log
while the service keeps serving from the old one, then swapped in (entrypoints/bootstrap/rebuild.py;
docs/operations.md). Safe beside a running service: it takes no lock the service holds."""

from __future__ import annotations

from typing import Annotated

import typer


def rebuild_projection(
    name: Annotated[str, typer.Argument(help="The read model, e.g. calls_list_v1 (an unknown name lists them)")],
) -> None:
    """Rebuild one read model from the event store, with a progress bar, and swap it in (blue/green)."""
    from entrypoints.bootstrap import bootstrap_cli
    from entrypoints.bootstrap.followers import READ_MODELS
    from entrypoints.bootstrap.rebuild import rebuild
    from entrypoints.cli.command_settings import command_settings, existing_settings
    from entrypoints.logging import configure
    from projections.analyst_views import install_analyst_views

    if name not in READ_MODELS:
        typer.echo(f"error: no read model {name!r}; there are {', '.join(sorted(READ_MODELS))}", err=True)
        raise typer.Exit(2)
    settings = existing_settings(command_settings())
    configure("warning", "console")
    container = bootstrap_cli(settings)
    database = container.database
    app, view_class, projection_class = READ_MODELS[name](container)
    head = app.recorder.max_notification_id() or 0
    try:
        with typer.progressbar(length=max(head, 1), label=f"rebuilding {name}", show_pos=True) as bar:
            shown = [0]

            def progress(position: int, _head: int) -> None:
                bar.update(max(0, min(position, head) - shown[0]))
                shown[0] = max(shown[0], min(position, head))

            done = rebuild(database, app, view_class, projection_class, progress=progress,
                           after_swap=lambda: install_analyst_views(database.conninfo(), database.schema))
    finally:
        container.close()
    typer.echo(f"{done.name}: {done.events} events projected in {done.seconds:.1f} s, swapped in at position "
               f"{done.position} (tables locked {done.swap_ms:.0f} ms)")
