"""Who may start a webhook attempt now (webhook_dispatcher.py, docs/decisions.md 33): the
dispatcher's slots shared between tenants, and each endpoint's own concurrency, which shrinks while
it times out and backs off an endpoint that keeps timing out. Bookkeeping only: no I/O, no clock of
its own (``now`` is monotonic seconds)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ANSWERED = "answered"  # any HTTP answer, 5xx included: the endpoint is there and quick enough
TIMED_OUT = "timed_out"
FAILED = "failed"  # refused, reset, TLS: no answer, but no slot held long either
NEUTRAL = "neutral"  # nothing was sent (lost a lease race, blocked by the URL policy, an error of ours)

BACK_OFF_AFTER = 3  # consecutive timeouts
FIRST_COOL_DOWN = 1.0  # seconds; doubles after each probe that times out
MAX_COOL_DOWN = 30.0

Candidate = tuple[object, str, str]  # (delivery uuid, endpoint id, tenant id)


@dataclass
class EndpointHealth:
    """One endpoint's concurrency (AIMD): it starts at ``ceiling``, halves (down to 1) on each
    attempt that got no answer and grows back by one per answer. After ``BACK_OFF_AFTER`` timeouts
    in a row the endpoint is backed off: nothing for a cool-down, then one probe at a time; an
    answer ends the back-off, a probe that times out doubles the cool-down (up to ``MAX_COOL_DOWN``)."""

    ceiling: int
    limit: int = 0
    timeouts: int = 0  # in a row
    cool_until: float | None = None  # backed off when set
    cool_down: float = 0.0

    def __post_init__(self) -> None:
        self.limit = self.limit or self.ceiling

    def allowed(self, now: float) -> int:
        """How many attempts may be in flight now."""
        if self.cool_until is None:
            return self.limit
        return 0 if now < self.cool_until else 1

    def cooling(self, now: float) -> bool:
        return self.cool_until is not None and now < self.cool_until

    @property
    def backed_off(self) -> bool:
        return self.cool_until is not None

    @property
    def pristine(self) -> bool:
        return self.limit == self.ceiling and not self.timeouts and self.cool_until is None

    def answered(self) -> None:
        self.limit = min(self.ceiling, self.limit + 1)
        self.timeouts, self.cool_until, self.cool_down = 0, None, 0.0

    def no_answer(self, *, timed_out: bool, probe: bool, now: float) -> None:
        self.limit = max(1, self.limit // 2)
        if not timed_out:
            return
        self.timeouts += 1
        if self.cool_until is None and self.timeouts >= BACK_OFF_AFTER:
            self.cool_down = FIRST_COOL_DOWN
            self.cool_until = now + self.cool_down
        elif self.cool_until is not None and probe:  # attempts started before the back-off do not count
            self.cool_down = min(MAX_COOL_DOWN, 2 * self.cool_down)
            self.cool_until = now + self.cool_down


@dataclass(frozen=True)
class Ticket:
    """One admitted attempt: hand it back to ``WebhookSlots.done``."""

    tenant_id: str
    endpoint_id: str
    probe: bool


class WebhookSlots:
    """``concurrency`` attempts in flight in all. A tenant holds at most its share of them:
    ``max(tenant_floor, (concurrency - reserve) // tenants with work)``; ``reserve`` slots are left
    to a tenant that has none yet, so its first attempt never waits for another tenant's to end.
    An endpoint holds at most what its ``EndpointHealth`` allows."""

    def __init__(self, concurrency: int, per_endpoint: int, *, tenant_floor: int = 4,
                 reserve: int | None = None) -> None:
        self.concurrency, self.per_endpoint, self.tenant_floor = concurrency, per_endpoint, tenant_floor
        self.reserve = reserve if reserve is not None else min(concurrency // 2, max(tenant_floor, concurrency // 8))
        self.in_flight = 0
        self._tenants: Counter[str] = Counter()
        self._endpoints: Counter[str] = Counter()
        self._health: dict[str, EndpointHealth] = {}
        self._share = concurrency - self.reserve

    # --- a round ------------------------------------------------------------------------------------

    def begin_round(self, waiting: Iterable[str]) -> int:
        """The tenants with something due this round; the share each may hold until the next."""
        tenants = set(self._tenants) | set(waiting)
        self._share = max(self.tenant_floor, (self.concurrency - self.reserve) // max(1, len(tenants)))
        return self._share

    def in_turns(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """The round's candidates taking turns between tenants, the tenant with the fewest attempts
        in flight first; each tenant's own in the order given (oldest due first)."""
        queues: dict[str, list[Candidate]] = {}
        for candidate in candidates:
            queues.setdefault(candidate[2], []).append(candidate)
        tenants = sorted(queues, key=lambda t: self._tenants[t])
        return [queue[i] for i in range(max(map(len, queues.values()), default=0))
                for queue in (queues[t] for t in tenants) if i < len(queue)]

    def cooling(self, endpoint_id: str, now: float) -> bool:
        """Backed off and in its cool-down: its attempts are not started at all."""
        health = self._health.get(endpoint_id)
        return health is not None and health.cooling(now)

    def admit(self, tenant_id: str, endpoint_id: str, now: float) -> Ticket | None:
        """A ticket if the attempt may start now (its slot is then taken), else None."""
        health = self._health.get(endpoint_id)
        allowed = health.allowed(now) if health is not None else self.per_endpoint
        if (self.in_flight >= self.concurrency or self._tenants[tenant_id] >= self._share
                or self._endpoints[endpoint_id] >= allowed):
            return None
        self.in_flight += 1
        self._tenants[tenant_id] += 1
        self._endpoints[endpoint_id] += 1
        return Ticket(tenant_id, endpoint_id, probe=health is not None and health.backed_off)

    def done(self, ticket: Ticket, result: str, now: float) -> None:
        """The attempt ended with ``result`` (``ANSWERED``, ``TIMED_OUT``, ``FAILED``, ``NEUTRAL``)."""
        self.in_flight -= 1
        _decrement(self._tenants, ticket.tenant_id)
        _decrement(self._endpoints, ticket.endpoint_id)
        health = self._health.get(ticket.endpoint_id)
        if result in (TIMED_OUT, FAILED):
            if health is None:
                health = self._health[ticket.endpoint_id] = EndpointHealth(self.per_endpoint)
            health.no_answer(timed_out=result == TIMED_OUT, probe=ticket.probe, now=now)
        elif result == ANSWERED and health is not None:
            health.answered()
        if health is not None and health.pristine and not self._endpoints[ticket.endpoint_id]:
            del self._health[ticket.endpoint_id]  # no memory of endpoints that are well again

    # --- for logs and tests ---------------------------------------------------------------------------

    def health(self, endpoint_id: str) -> EndpointHealth:
        return self._health.get(endpoint_id) or EndpointHealth(self.per_endpoint)

    def held_by(self, tenant_id: str) -> int:
        return self._tenants[tenant_id]


def _decrement(counter: Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]
