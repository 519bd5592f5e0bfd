"""What each kind of process runs, and the database connections it may hold: the one place that
decides both (docs/operations.md, "Roles and connections").

A process has one role, chosen from its command and options:

| role | command | views | reactors | dispatcher, watchdog, reconciler, resumer | relay |
|---|---|---|---|---|---|
| ``all-in-one`` | ``serve`` (no Kafka) | lead | from the log | yes | no |
| ``api`` | ``serve --no-followers`` | watch | no | no | no |
| ``api+projector`` | ``serve`` with Kafka | lead | no (Kafka workers) | no | no |
| ``worker`` | ``worker --no-projections`` | no | from Kafka, or the log | yes | no |
| ``projector`` | ``worker --no-reactors`` | lead | no | no | no |
| ``worker+projector`` | ``worker`` | lead | from Kafka, or the log | yes | no |
| ``relay`` | ``relay`` | no | no | no | yes |
| ``cli`` | ``admin …`` | no | no | no | no |

"lead": each view follows the log under its advisory lock (extra copies stand by); "watch": the
views' tracking is only read, for read-your-writes. The webhook dispatcher and the resumer run in
every process that runs the reactors (leases make that safe); the watchdog and the reconciler run
there too, each under an advisory lock, so one process does their rounds.

Connections: each role has a budget (``POOLS``), split between its pools; the whole is scaled to
``CALLWRIGHT_DATABASE_MAX_CONNECTIONS`` when that is set. The defaults fit compose's roles (api,
worker, projector, relay: 48) with two more workers (74), or two of every role (96), inside
PostgreSQL's default ``max_connections`` of 100 (97 for ordinary users).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Literal

Views = Literal["lead", "watch", "none"]
Feed = Literal["log", "kafka", "none"]

# The pools of each role and their sizes (maximum connections), by default:
#   events_accounts / events_calling  each application's event store (eventsourcing's pool)
#   views        the read models' tables and the followers' tracking
#   core         rate limits, greetings, run leases, Kafka dedupe, the periodic jobs' reads
#   reads        the HTTP server's async pool (the hot paths' reads, the loop's appends)
#   readiness    /readyz's own pool, so a busy read pool does not make it late
#   locks        the one connection holding this process's advisory locks
#   relay        the relay's tracking
POOLS: dict[str, dict[str, int]] = {
    "all-in-one": {"events_accounts": 4, "events_calling": 8, "views": 8, "core": 6, "reads": 10, "readiness": 2,
                   "locks": 1},
    "api": {"events_accounts": 2, "events_calling": 3, "views": 1, "core": 2, "reads": 6, "readiness": 2},
    "api+projector": {"events_accounts": 2, "events_calling": 4, "views": 6, "core": 3, "reads": 8, "readiness": 2,
                      "locks": 1},
    "worker": {"events_accounts": 2, "events_calling": 6, "core": 4, "locks": 1},
    "projector": {"events_accounts": 2, "events_calling": 2, "views": 6, "core": 2, "locks": 1},
    "worker+projector": {"events_accounts": 2, "events_calling": 6, "views": 6, "core": 4, "locks": 1},
    "relay": {"events_accounts": 1, "events_calling": 1, "core": 1, "relay": 2, "locks": 1},
    "cli": {"events_accounts": 2, "events_calling": 2, "core": 2},
}
# A worker whose reactors follow the notification log keeps their tracking beside the views.
LOG_FED_VIEWS = 3
FIXED = ("readiness", "locks")  # not scaled with the budget


@dataclass(frozen=True)
class Role:
    name: str
    views: Views = "none"
    reactors: Feed = "none"
    http: bool = False
    relay: bool = False

    @property
    def jobs(self) -> bool:
        """The webhook dispatcher, the watchdog, the reconciler and the resumer run here."""
        return self.reactors != "none"

    def pools(self, max_connections: int | None = None) -> dict[str, int]:
        """Each pool's maximum connections: the role's defaults, or scaled so that they add up to
        ``max_connections`` (each pool keeps one at least)."""
        sizes = dict(POOLS[self.name])
        if self.reactors == "log" and "views" not in sizes:
            sizes["views"] = LOG_FED_VIEWS
        if max_connections is None:
            return sizes
        fixed = sum(size for name, size in sizes.items() if name in FIXED)
        scaled = {name: size for name, size in sizes.items() if name not in FIXED}
        room = max_connections - fixed
        if room < len(scaled):
            raise ValueError(f"CALLWRIGHT_DATABASE_MAX_CONNECTIONS={max_connections} is too few for the "
                             f"{self.name} role: it has {len(scaled) + fixed} pools, each needs one connection "
                             f"at least ({fixed} fixed)")
        total = sum(scaled.values())
        shares = {name: max(1, math.floor(size * room / total)) for name, size in scaled.items()}
        # Hand out what rounding left to the largest pools first, then take back any excess.
        order = sorted(scaled, key=lambda name: -scaled[name])
        i = 0
        while sum(shares.values()) < room:
            shares[order[i % len(order)]] += 1
            i += 1
        while sum(shares.values()) > room:
            name = max((n for n in order if shares[n] > 1), key=lambda n: shares[n])
            shares[name] -= 1
        return {**shares, **{name: size for name, size in sizes.items() if name in FIXED}}


ROLES: dict[str, Role] = {role.name: role for role in (
    Role("all-in-one", views="lead", reactors="log", http=True),
    Role("api", views="watch", http=True),
    Role("api+projector", views="lead", http=True),
    Role("worker", reactors="kafka"),
    Role("projector", views="lead"),
    Role("worker+projector", views="lead", reactors="kafka"),
    Role("relay", relay=True),
    Role("cli"),
)}


def worker_role(*, projections: bool, reactors: bool, kafka: bool) -> Role:
    """``callwright worker``'s role from its options (reactors from the log without Kafka)."""
    if not reactors:
        return ROLES["projector"]
    role = ROLES["worker+projector" if projections else "worker"]
    return role if kafka else Role(role.name, views=role.views, reactors="log")


def http_role(*, followers: bool, kafka: bool) -> Role:
    if not followers:
        return ROLES["api"]
    return ROLES["api+projector" if kafka else "all-in-one"]


def name_connections(role: Role) -> str:
    """Every connection this process opens from now on says who holds it in ``pg_stat_activity``
    (libpq reads ``PGAPPNAME``): ``callwright:ROLE:PID``."""
    name = f"callwright:{role.name}:{os.getpid()}"
    os.environ["PGAPPNAME"] = name
    return name
