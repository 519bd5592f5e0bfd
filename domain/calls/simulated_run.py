"""The simulated-call commands of ``Call``: a runner's claim is a lease (ARCHITECTURE.md §7).

A runner that starts a simulated conversation holds the call for ``LEASE`` and renews the lease
as the conversation goes on. When the runner's process dies (a crash, a kill, a lost machine) the
lease runs out within seconds and another runner takes the call over: the conversation starts
again from its beginning, since nothing was spoken to anyone. A runner that was only slow and
writes after the take-over loses the race (optimistic concurrency) and stops.

A mixin of the aggregate, as ``live_commands.py``: the ``@event`` methods stay in ``call.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from domain.calls.call_rules import IN_PROGRESS, OUTBOUND, QUEUED, SIMULATED, CallStateError

if TYPE_CHECKING:
    from domain.calls.call import Call

    _Base = Call
else:
    _Base = object

# How long a claimed simulated call stays with its runner without a word from it.
LEASE = timedelta(seconds=15)
# A running conversation renews its lease when this much of it has passed.
RENEW_AFTER = timedelta(seconds=5)


class SimulatedRunCommands(_Base):
    @property
    def lease_expires_at(self) -> datetime | None:
        """Until when the runner of a simulated call holds it. Calls started before leases
        existed count from their start."""
        lease = getattr(self, "lease_until", None)
        if lease is None and self.started_at is not None:
            return self.started_at + LEASE
        return lease

    def start(self, now: datetime) -> None:
        """Claim a queued simulated call for running; a second claim conflicts (optimistic
        concurrency). The claim is a lease of ``LEASE``."""
        self._require(QUEUED)
        self._started(at=now)
        self._leased(until=now + LEASE, at=now)

    def renew_lease(self, now: datetime) -> bool:
        """Extend the runner's lease when ``RENEW_AFTER`` has passed since it was last granted;
        whether it was extended (to be saved with the conversation's next write)."""
        self._require(IN_PROGRESS)
        expires = self.lease_expires_at
        if expires is not None and expires - now > LEASE - RENEW_AFTER:
            return False
        self._leased(until=now + LEASE, at=now)
        return True

    def abandoned(self, now: datetime) -> bool:
        """A simulated outbound call in progress whose runner's lease has run out."""
        expires = self.lease_expires_at
        return (self.status == IN_PROGRESS and self.mode == SIMULATED and self.direction == OUTBOUND
                and expires is not None and expires <= now)

    def take_over(self, now: datetime) -> None:
        """Restart an abandoned simulated call under a new lease: what the first runner recorded
        (answer, turns, end) is set aside, and the conversation runs again from its start."""
        if not self.abandoned(now):
            raise CallStateError("the call is not an abandoned simulated call")
        self._restarted(lease_until=now + LEASE, at=now)
