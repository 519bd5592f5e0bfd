"""Call costs as decimals from a price table (ARCHITECTURE.md §7): ``cost_voice`` is the
conversation (voice minutes × engine price, plus the agent's model tokens × model price),
``cost_extraction`` the extraction's tokens × model price. Simulated calls spend no voice minutes;
their agent's tokens are priced all the same (docs/decisions.md 35)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from domain.calls.engines import DEFAULT_PROFILES, EngineProfile

CENT_FRACTION = Decimal("0.0001")


def money(amount: Decimal) -> str:
    """A decimal string with the price table's four places, whatever scale the event stored."""
    return format(Decimal(amount).quantize(CENT_FRACTION), "f")


MILLION = Decimal(1_000_000)


@dataclass(frozen=True, kw_only=True)
class PriceTable:
    voice_per_minute: Mapping[str, Decimal]
    input_per_million_tokens: Decimal
    output_per_million_tokens: Decimal

    def voice(self, engine: str, seconds: int, *, simulated: bool) -> Decimal:
        if simulated or seconds <= 0:
            return Decimal("0.0000")
        per_minute = self.voice_per_minute.get(engine, Decimal("0"))
        return (per_minute * Decimal(seconds) / Decimal(60)).quantize(CENT_FRACTION, ROUND_HALF_UP)

    def extraction(self, usage: Mapping[str, int]) -> Decimal:
        return self.tokens(usage)

    def tokens(self, usage: Mapping[str, int]) -> Decimal:
        """Model tokens at the model's prices: the extraction's, and the agent's over a conversation."""
        cost = (
            Decimal(usage.get("input_tokens", 0)) * self.input_per_million_tokens
            + Decimal(usage.get("output_tokens", 0)) * self.output_per_million_tokens
        ) / MILLION
        return cost.quantize(CENT_FRACTION, ROUND_HALF_UP)


def price_table(profiles: Mapping[str, EngineProfile]) -> PriceTable:
    """Voice prices from the engine profiles, model prices from the defaults."""
    return PriceTable(voice_per_minute={name: p.price_per_minute for name, p in profiles.items()},
                      input_per_million_tokens=Decimal("3.00"), output_per_million_tokens=Decimal("15.00"))


DEFAULT_PRICES = price_table(DEFAULT_PROFILES)
