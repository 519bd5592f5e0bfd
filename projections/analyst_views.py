"""The analysts' schema (docs/analytics-schema.md): read-only views with fixed columns over the read
models, and the PostgreSQL login roles allowed to read them.

The views live in their own schema (``analytics``, or ``<schema>_analytics`` beside a service in a
non-default schema) so that analysts never need a right on the service's own schema. Each view
names its columns one by one: a projection that adds, renames or retypes a column of its table
changes no view. A breaking change to a view gets a new view (``calls_v2``) beside the old one;
ANALYST_VIEWS_VERSION is the version of the set, also in the schema's comment.

Tenant restriction: every view keeps only the rows of the *scope* of the connection's
``session_user``, looked up in ``<service schema>.analyst_roles`` (role name, role oid, tenant or
NULL for all tenants). The views are ``security_barrier`` views with the default
``security_invoker = false``: they read the tables and ``analyst_roles`` with their owner's (the
service's) rights, so an analyst role needs, and is given, no right on the service's schema.
Why this holds against the analyst:

- ``session_user`` is the role that logged in; ``SET ROLE`` changes ``current_user`` only, and
  ``SET SESSION AUTHORIZATION`` needs a superuser. No setting changes the scope.
- ``analyst_roles`` is in the service's schema, where analysts have no right at all: only the
  service (``callwright admin analyst-role``) writes it.
- ``security_barrier`` evaluates the view's own condition before any function of the analyst's
  query that is not leakproof, so a function that raises or notices cannot see filtered rows.
- Functions and operators of a view are bound when the view is created, so objects an analyst
  creates in its own ``search_path`` cannot replace them.
- A session user that is not listed sees every row only if it may read the underlying table
  anyway (the service, a superuser); any other unlisted role sees none.

``callwright.analyst_tenant``, when set, only narrows the scope further (an all-tenants role can
look at one tenant): setting it to another tenant than the role's own shows no rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg
from psycopg import sql

from application import logs

log = logs.get_logger("callwright.analytics")

ANALYST_VIEWS_VERSION = 1
ROLES_TABLE = "analyst_roles"
TENANT_SETTING = "callwright.analyst_tenant"
NAME_PATTERN = r"^[a-z_][a-z0-9_]{0,62}$"
TENANT_PATTERN = r"^ten_[0-9a-f]{32}$"


@dataclass(frozen=True)
class AnalystView:
    """A view ``name`` over the service's ``table``: ``columns`` are (name, expression) pairs, an
    expression of None being the table's column of that name; ``optional`` columns come last, each
    only if the table has it when the view is created."""

    name: str
    table: str
    columns: tuple[tuple[str, str | None], ...]
    optional: tuple[str, ...] = ()


def _plain(*names: str) -> tuple[tuple[str, str | None], ...]:
    return tuple((name, None) for name in names)


# The last attempt of a delivery, from the ``attempts`` array (whose response bodies stay out).
_LAST = "(t.attempts -> -1)"

VIEWS = (
    AnalystView("calls", "calls_list_v1", _plain(
        "call_id", "tenant_id", "status", "mode", "direction", "voice_engine", "to_number", "from_number",
        "objective", "confidence", "duration_seconds", "cost_total", "error_code", "recording_url", "has_outcome",
        "created_at", "ended_at", "metadata", "outcome")),
    AnalystView("call_facts", "call_facts_v1", _plain(
        "call_id", "tenant_id", "created_at", "ended_at", "direction", "mode", "status", "error_code",
        "voice_engine", "number_id", "to_country", "from_country", "country", "duration_seconds", "first_audio_ms",
        "confidence", "cost_voice", "cost_extraction", "cost_total", "fields_filled", "fields_required",
        "fields_optional", "optional_filled", "template_id", "flow_id", "flow_version")),
    AnalystView("webhook_deliveries", "webhook_deliveries_v1", (
        *_plain("delivery_id", "tenant_id", "endpoint_id", "call_id", "event_id", "event_type", "status"),
        ("attempt_count", "jsonb_array_length(t.attempts)"),
        ("last_attempt_at", f"({_LAST} ->> 'at')::timestamptz"),
        ("last_response_status", f"({_LAST} ->> 'response_status')::integer"),
        ("last_latency_ms", f"({_LAST} ->> 'latency_ms')::integer"),
        ("last_error", f"{_LAST} ->> 'error'"),
        *_plain("next_attempt_at", "created_at"))),
    AnalystView("audit_events", "audit_events_v1", _plain(
        "audit_id", "tenant_id", "type", "actor", "subject", "occurred_at", "data"), optional=("prev_hash", "hash")),
)


def analyst_schema_name(service_schema: str) -> str:
    """``analytics`` beside a service in ``public``, else ``<schema>_analytics``: services (and test
    schemas) sharing one database each get their own."""
    name = "analytics" if service_schema == "public" else f"{service_schema}_analytics"
    if len(name.encode()) > 63:  # PostgreSQL would truncate it, and two services could share it
        raise ValueError(f"the analysts' schema name {name!r} is longer than 63 bytes")
    return name


def install_analyst_views(conninfo: str, service_schema: str) -> str:
    """(Re)creates the analysts' schema, its views and ``analyst_roles``, and grants the views to
    the roles recorded there; answers the schema's name. Run at every start, after the read models'
    tables: one transaction, serialised across processes starting together. Without the right to
    create the schema, the service still starts and says so."""
    try:
        return _install(conninfo, service_schema)
    except psycopg.errors.InsufficientPrivilege as exc:
        log.warning("analytics.views_not_installed", schema=analyst_schema_name(service_schema),
                    reason=type(exc).__name__,
                    hint="the service's role needs CREATE on the database to create the analysts' schema")
        return analyst_schema_name(service_schema)


def _install(conninfo: str, service_schema: str) -> str:
    analytics = analyst_schema_name(service_schema)
    with psycopg.connect(conninfo) as conn, conn.transaction():
        _lock(conn, service_schema)
        _create_schema(conn, service_schema, analytics)
        for view in VIEWS:
            _create_view(conn, view, service_schema, analytics)
        _grant_recorded(conn, service_schema, analytics)
    return analytics


def _lock(conn: psycopg.Connection, service_schema: str) -> None:
    """Concurrent CREATE OR REPLACE of one view fails ("tuple concurrently updated"), and so may two
    grants at once: processes starting together take turns."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"callwright.analyst_views:{service_schema}",))


def _create_schema(conn: psycopg.Connection, service_schema: str, analytics: str) -> None:
    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(analytics)))
    conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
        sql.Identifier(analytics), sql.Literal(f"callwright analytics views v{ANALYST_VIEWS_VERSION}")))
    conn.execute(sql.SQL(
        "CREATE TABLE IF NOT EXISTS {} (role_name text PRIMARY KEY, role_oid oid NOT NULL, tenant_id text "
        "CHECK (tenant_id ~ {}), recorded_at timestamptz NOT NULL DEFAULT now())"
    ).format(sql.Identifier(service_schema, ROLES_TABLE), sql.Literal(TENANT_PATTERN)))


def _columns(conn: psycopg.Connection, view: AnalystView, service_schema: str) -> list[sql.Composable]:
    """The select list: the fixed columns, then the optional ones the table has now."""
    present = {row[0] for row in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s",
        (service_schema, view.table))}
    chosen = [*view.columns, *((name, None) for name in view.optional if name in present)]
    return [sql.SQL("{} AS {}").format(sql.Identifier("t", name) if expression is None else sql.SQL(expression),
                                       sql.Identifier(name)) for name, expression in chosen]


def _scope(service_schema: str, table: str) -> sql.Composable:
    """The session user's tenant, ``'*'`` for all tenants, NULL for none (see the module's doc). A
    record counts for the role it was made for only, not for a later role of the same name."""
    return sql.SQL(
        "(SELECT COALESCE((SELECT COALESCE(r.tenant_id, '*') FROM {roles} AS r JOIN pg_roles AS p "
        "ON p.oid = r.role_oid AND p.rolname = r.role_name WHERE r.role_name = session_user::text),"
        " CASE WHEN has_table_privilege(session_user, {table}::regclass, 'SELECT') THEN '*' END))"
    ).format(roles=sql.Identifier(service_schema, ROLES_TABLE),
             table=sql.Literal(sql.Identifier(service_schema, table).as_string()))


def _create_view(conn: psycopg.Connection, view: AnalystView, service_schema: str, analytics: str) -> None:
    conn.execute(sql.SQL(
        "CREATE OR REPLACE VIEW {view} WITH (security_barrier) AS SELECT {columns} FROM {table} AS t "
        "WHERE {scope} IN ('*', t.tenant_id) "
        "AND COALESCE(NULLIF(current_setting({setting}, true), ''), t.tenant_id) = t.tenant_id"
    ).format(view=sql.Identifier(analytics, view.name), columns=sql.SQL(", ").join(_columns(conn, view, service_schema)),
             table=sql.Identifier(service_schema, view.table), scope=_scope(service_schema, view.table),
             setting=sql.Literal(TENANT_SETTING)))
    conn.execute(sql.SQL("COMMENT ON VIEW {} IS {}").format(
        sql.Identifier(analytics, view.name),
        sql.Literal(f"callwright analytics v{ANALYST_VIEWS_VERSION}: {view.table}, rows of the reader's tenants")))


def _grant_recorded(conn: psycopg.Connection, service_schema: str, analytics: str) -> None:
    """Forgets the recorded roles that were dropped (a new role of the same name is another role:
    its oid differs), and grants every view to the others, so a view added later reaches them."""
    roles = sql.Identifier(service_schema, ROLES_TABLE)
    conn.execute(sql.SQL("DELETE FROM {} AS r WHERE NOT EXISTS (SELECT FROM pg_roles AS p "
                         "WHERE p.oid = r.role_oid AND p.rolname = r.role_name)").format(roles))
    for (name,) in conn.execute(sql.SQL("SELECT role_name FROM {} ORDER BY role_name").format(roles)).fetchall():
        _grant_views(conn, analytics, name)


def _grant_views(conn: psycopg.Connection, analytics: str, role: str) -> None:
    """USAGE on the analysts' schema and SELECT on its views: nothing else, nothing to write."""
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(analytics), sql.Identifier(role)))
    views = sql.SQL(", ").join(sql.Identifier(analytics, view.name) for view in VIEWS)
    conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(views, sql.Identifier(role)))


class AnalystRoleError(Exception):
    """The role cannot be made an analyst role (a name or tenant not allowed, another kind of role)."""


def grant_analyst_role(conninfo: str, service_schema: str, name: str, tenant_id: str | None, password: str) -> str:
    """Creates, or updates, the LOGIN role ``name`` with ``password`` (sent as a SCRAM verifier,
    never as text), restricted to ``tenant_id`` (None: all tenants): records it in
    ``analyst_roles`` and grants it the views of the analysts' schema, whose name it answers.
    A role that exists and was not made here (the service's own, a person's) is refused."""
    if not re.fullmatch(NAME_PATTERN, name) or name.startswith("pg_"):
        raise AnalystRoleError(f"role name must match {NAME_PATTERN} and not start with pg_")
    if tenant_id is not None and not re.fullmatch(TENANT_PATTERN, tenant_id):
        raise AnalystRoleError("tenant must be ten_ followed by 32 lowercase hex digits")
    analytics = _install(conninfo, service_schema)  # a failure is the caller's to show
    with psycopg.connect(conninfo) as conn, conn.transaction():
        _lock(conn, service_schema)
        verifier = conn.pgconn.encrypt_password(password.encode(), name.encode()).decode()
        _create_or_update_role(conn, service_schema, name, verifier)
        conn.execute(sql.SQL(
            "INSERT INTO {} (role_name, role_oid, tenant_id) SELECT rolname, oid, %s FROM pg_roles WHERE rolname = %s "
            "ON CONFLICT (role_name) DO UPDATE SET role_oid = EXCLUDED.role_oid, tenant_id = EXCLUDED.tenant_id, "
            "recorded_at = now()").format(sql.Identifier(service_schema, ROLES_TABLE)), (tenant_id, name))
        _grant_views(conn, analytics, name)
    return analytics


def _create_or_update_role(conn: psycopg.Connection, service_schema: str, name: str, verifier: str) -> None:
    role = sql.Identifier(name)
    # Only the login and password; no attribute that reaches beyond the grants given here.
    attributes = sql.SQL("LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS PASSWORD {}"
                         ).format(sql.Literal(verifier))
    existing = conn.execute("SELECT oid FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    if existing is None:
        conn.execute(sql.SQL("CREATE ROLE {} {}").format(role, attributes))
    else:
        recorded = conn.execute(sql.SQL("SELECT FROM {} WHERE role_name = %s AND role_oid = %s").format(
            sql.Identifier(service_schema, ROLES_TABLE)), (name, existing[0])).fetchone()
        if recorded is None:
            raise AnalystRoleError(f"role {name} exists and is not an analyst role of this service: "
                                   "choose another name")
        conn.execute(sql.SQL("ALTER ROLE {} {}").format(role, attributes))
    # So that `SELECT ... FROM calls` finds the views; the role may change it, to no avail.
    conn.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(
        role, sql.Identifier(analyst_schema_name(service_schema))))
