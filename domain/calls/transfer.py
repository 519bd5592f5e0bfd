"""A live call's transfer to a person (SPEC.md ``transfer_call``; a flow's transfer step): the
destinations to dial in turn, the legs dialled so far and where the transfer stands.

A frozen value: the ``Call`` events that change it build a new one (``requested``, ``after_leg``,
``resumed_from``) from what the event says; nothing else about the call is read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REQUESTED, COMPLETED, FAILED = "requested", "completed", "failed"
ANSWERED = "completed"  # the dial status of a leg somebody answered


@dataclass(frozen=True)
class Destination:
    label: str
    e164: str


@dataclass(frozen=True)
class Leg:
    index: int  # of the destination dialled
    dial_status: str  # completed (answered), busy, no_answer, failed, canceled


@dataclass(frozen=True, kw_only=True)
class Transfer:
    destinations: tuple[Destination, ...]
    max_attempts: int
    brief: str  # what the person taking the call should know
    legs: tuple[Leg, ...] = ()
    status: str = REQUESTED  # requested, completed (a leg answered) or failed (the attempts are spent)
    step: str | None = None  # the flow's transfer step that asked for it
    answers: Mapping[str, Any] | None = None  # the flow walk's answers then (keypad digits left out)
    resumed: bool = False  # nobody answered and the agent took the call back at the flow's next step

    @classmethod
    def requested(cls, destinations: Sequence[Mapping[str, str]], max_attempts: int, brief: str,
                  step: str | None, answers: Mapping[str, Any] | None) -> Transfer:
        return cls(destinations=tuple(Destination(label=d.get("label", ""), e164=d["e164"]) for d in destinations),
                   max_attempts=max_attempts, brief=brief, step=step,
                   answers=None if step is None else dict(answers or {}))

    @classmethod
    def after_leg(cls, transfer: Transfer, index: int, dial_status: str) -> Transfer:
        """A leg ended: answered completes the transfer; the last allowed attempt unanswered fails it."""
        legs = (*transfer.legs, Leg(index=index, dial_status=dial_status))
        status = COMPLETED if dial_status == ANSWERED else FAILED if len(legs) >= transfer.limit else REQUESTED
        return cls(**{**transfer.__dict__, "legs": legs, "status": status})

    @classmethod
    def resumed_from(cls, transfer: Transfer) -> Transfer:
        return cls(**{**transfer.__dict__, "resumed": True})

    @classmethod
    def after_session_opened(cls, transfer: Transfer | None, resumes: bool) -> Transfer | None:
        """A voice session opened: one that resumes the call after a failed flow transfer marks it."""
        return cls.resumed_from(transfer) if resumes and transfer is not None else transfer

    @property
    def pending(self) -> bool:
        return self.status == REQUESTED

    @property
    def limit(self) -> int:
        """How many destinations may be dialled: the attempts, at most one per destination."""
        return min(self.max_attempts, len(self.destinations))

    def destination(self, index: int) -> int | None:
        """``index`` when that destination may be dialled now, else None."""
        return index if self.pending and 0 <= index < self.limit else None

    def next_destination(self) -> int | None:
        """The destination to dial after the legs so far, or None when the attempts are spent."""
        return self.destination(len(self.legs))

    def as_dict(self) -> dict[str, Any]:
        """The shape the call kept before this value existed (events and records never show it)."""
        flow = {} if self.step is None else {"step": self.step, "answers": dict(self.answers or {})}
        resumed = {"resumed": True} if self.resumed else {}
        return {"destinations": [{"label": d.label, "e164": d.e164} for d in self.destinations],
                "max_attempts": self.max_attempts, "brief": self.brief,
                "legs": [{"index": leg.index, "dial_status": leg.dial_status} for leg in self.legs],
                "status": self.status, **flow, **resumed}
