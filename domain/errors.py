"""Rule violations raised by aggregates and policies; each has a stable ``code``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

Problem = tuple[list[str | int], str, str]  # (loc, message, type code)
InputProblem = tuple[list[str | int], str, str, Any]  # (loc, message, type code, the input at fault)


class DomainError(Exception):
    code = "domain_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class KeyAlreadyRotatedError(DomainError):
    code = "key_already_rotated"


class KeyRevokedError(DomainError):
    code = "key_revoked"


class TokenUsedError(DomainError):
    code = "token_used"


class TokenExpiredError(DomainError):
    code = "token_expired"


class WeakPasswordError(DomainError):
    code = "weak_password"


class RequestRuleError(DomainError):
    """A request broke a rule the domain checks. ``details``: (loc, message, type code, input)
    with ``loc`` relative to the request; its caller prefixes where the request sits
    (``["body"]``, or ``["body", "items", 3]`` for a batch item)."""

    @property
    def details(self) -> list[InputProblem]:
        raise NotImplementedError

    def within(self, prefix: list[str | int]) -> list[InputProblem]:
        return [([*prefix, *loc], message, kind, value) for loc, message, kind, value in self.details]

    @property
    def contexts(self) -> list[dict[str, Any]]:
        """The ``ctx`` of each of ``details`` (the limit a value broke), in the same order."""
        return [{} for _ in self.details]


class DialingRuleError(RequestRuleError):
    """A destination, consent, suppression or call-hours rule refused a call (ARCHITECTURE.md §7);
    ``loc`` names the call request's field at fault (``["to"]``, ``["consent_type"]``)."""

    code = "dialing_rule"

    def __init__(self, message: str, *, code: str | None = None, loc: list[str | int] | None = None,
                 input: Any = None) -> None:
        super().__init__(message, code=code)
        self.loc: list[str | int] = list(loc or [])
        self.input = input

    @property
    def details(self) -> list[InputProblem]:
        return [(list(self.loc), self.message, self.code, self.input)]


class InvalidE164Error(DialingRuleError):
    code = "invalid_e164"


class EmergencyNumberError(DialingRuleError):
    code = "emergency_number"


class N11NumberError(DialingRuleError):
    code = "n11_number"


class PremiumNumberError(DialingRuleError):
    code = "premium_number"


class NumberSuppressedError(DialingRuleError):
    code = "suppressed"


class ConsentMissingError(DialingRuleError):
    code = "consent_missing"


class InvalidConsentTypeError(DialingRuleError):
    code = "invalid_consent_type"


class OutsideCallHoursError(DialingRuleError):
    code = "outside_call_hours"

    def __init__(
        self,
        message: str,
        *,
        local_times: tuple[tuple[str, datetime], ...] = (),
        next_allowed_at: datetime | None = None,
        loc: list[str | int] | None = None,
        input: Any = None,
    ) -> None:
        super().__init__(message, loc=loc, input=input)
        self.local_times = local_times
        self.next_allowed_at = next_allowed_at

    def for_simulation(self) -> OutsideCallHoursError:
        """The same refusal for a simulated call, naming ``simulation.at`` as the way to see what a
        live call would do at another hour."""
        example = f' (e.g. "{self.next_allowed_at:%Y-%m-%dT%H:%M:%SZ}")' if self.next_allowed_at else ""
        return OutsideCallHoursError(
            f"{self.message}; a simulated call can be tried at another hour with simulation.at{example}",
            local_times=self.local_times, next_allowed_at=self.next_allowed_at, loc=self.loc, input=self.input)


class CallHoursUnknownError(DialingRuleError):
    code = "call_hours_unknown"


class OutcomeSchemaError(RequestRuleError):
    """The request's ``outcome_schema`` is malformed; ``problems`` lists every fault found, each
    located inside the schema (``details`` locate them in the request)."""

    code = "outcome_schema_invalid"
    loc = ("outcome_schema",)

    def __init__(self, problems: list[Problem], *, ctx: list[dict[str, Any]] | None = None) -> None:
        super().__init__(_summary("outcome_schema is invalid", problems))
        self.problems = problems
        self.ctx = ctx or [{} for _ in problems]

    @property
    def details(self) -> list[InputProblem]:
        return [([*self.loc, *where], message, kind, None) for where, message, kind in self.problems]

    @property
    def contexts(self) -> list[dict[str, Any]]:
        return self.ctx


class OutcomeInvalidError(DomainError):
    """An outcome does not follow its compiled schema; ``problems`` lists every fault found."""

    code = "outcome_invalid"

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(_summary("outcome does not match the outcome_schema", problems))
        self.problems = problems


def _summary(head: str, problems: list[Problem]) -> str:
    shown = "; ".join(f"{'.'.join(map(str, loc)) or '(root)'}: {msg}" for loc, msg, _ in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return f"{head}: {shown}{more}"


class NumberNotInAccountError(DomainError):
    """A caller number that the verified carrier account does not hold (SPEC.md Providers)."""

    code = "number_not_in_account"


class NumberConfigurationError(DomainError):
    """A number's settings break their rules (SPEC.md Number); ``problems`` lists every fault found."""

    code = "number_configuration_invalid"

    def __init__(self, problems: list[InputProblem]) -> None:
        super().__init__(_summary("the number's settings are invalid", [(loc, msg, kind) for loc, msg, kind, _ in problems]))
        self.problems = problems


class NumberTakenError(DomainError):
    """An E.164 already held by an active number, of this tenant or another."""

    code = "number_taken"


class NumberDisconnectedError(DomainError):
    """A change to a number that was disconnected (soft-deleted)."""

    code = "number_disconnected"
