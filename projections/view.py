"""Base of every SQL view: a PostgreSQL tracking recorder whose rows and tracking commit together."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from psycopg.sql import SQL, Composed, Identifier


def pg_text(value: Any) -> Any:
    """PostgreSQL text and jsonb cannot hold NUL, events can (they are stored as bytes): a NUL in
    a recorded string (a request path, a label) must not stop a view, so it is shown as U+FFFD."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {pg_text(k): pg_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [pg_text(v) for v in value]
    return value


def keyset_page(rows: list[dict[str, Any]], limit: int, key: str) -> tuple[list[dict[str, Any]], Any]:
    """Rows read with ``LIMIT limit + 1``: the page, and the last row's ``key`` when more follow
    (the next page starts past it), else None."""
    page = rows[:limit]
    return page, page[-1][key] if len(rows) > limit and page else None


class SqlView(PostgresTrackingRecorder):
    """Subclasses give ``table`` and ``ddl`` (``{table}`` and ``{schema}`` are substituted)."""

    table: str = ""
    ddl: Sequence[str] = ()

    def __init__(self, datastore: PostgresDatastore, **kwargs: Any) -> None:
        kwargs.setdefault("tracking_table_name", f"{self.table}_tracking")
        super().__init__(datastore, **kwargs)
        for statement in self.ddl:
            self.sql_create_statements.append(self.sql(statement))
        self._batch: list[tuple[Composed, Sequence[Any] | dict[str, Any]]] | None = None
        self._batch_tracking: Tracking | None = None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Writes made inside the block commit together when it ends, with one tracking row for
        the last event: one transaction (one flush to disk) per page of events, not per event.
        If the block raises, nothing is written and the events are processed again."""
        self._batch, self._batch_tracking = [], None
        try:
            yield
            statements, tracking = self._batch, self._batch_tracking
        finally:
            self._batch, self._batch_tracking = None, None
        if tracking is not None:
            self._commit(statements, tracking)

    def sql(self, statement: str) -> Composed:
        return SQL(statement).format(schema=Identifier(self.datastore.schema), table=Identifier(self.table))

    def write(self, statements: Iterable[tuple[Composed, Sequence[Any] | dict[str, Any]]], tracking: Tracking) -> None:
        """Apply the view change and record the tracking row in one transaction."""
        if self._batch is not None:
            self._batch.extend(statements)
            self._batch_tracking = tracking
            return
        self._commit(list(statements), tracking)

    def insert_tracking(self, tracking: Tracking) -> None:
        if self._batch is not None:
            self._batch_tracking = tracking
            return
        super().insert_tracking(tracking)

    def _commit(self, statements: list[tuple[Composed, Sequence[Any] | dict[str, Any]]], tracking: Tracking) -> None:
        """A run of the same statement goes as one ``executemany`` (pipelined: one round trip, where
        each round trip from a thread gives up the GIL and waits to take it back)."""
        with self.datastore.transaction(commit=True) as curs:
            for statement, params in _runs(statements):
                if len(params) == 1:
                    curs.execute(statement, params[0], prepare=True)
                else:
                    curs.executemany(statement, params)
            self._insert_tracking(curs, tracking)


def _runs(statements: list[tuple[Composed, Sequence[Any] | dict[str, Any]]]
          ) -> Iterator[tuple[Composed, list[Sequence[Any] | dict[str, Any]]]]:
    """Consecutive uses of one statement, in order."""
    run: list[Sequence[Any] | dict[str, Any]] = []
    current: Composed | None = None
    for statement, params in statements:
        if statement is not current and run:
            yield current, run  # type: ignore[misc]
            run = []
        current = statement
        run.append(params)
    if run:
        yield current, run  # type: ignore[misc]


class ReactorTracking(SqlView):
    """A reactor's tracking: a view with no rows of its own, so a page of events commits one
    tracking row instead of one per event. Reactors are idempotent (a call is claimed once, a
    delivery's id derives from its event), so after a crash the page is simply processed again."""
