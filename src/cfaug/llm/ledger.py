"""The usage ledger: requests, cache hits, tokens and estimated cost, per method and purpose; and the
budget guard that stops a run before ``--max-budget`` would be exceeded.

Prices come from a table of USD per million tokens (:data:`DEFAULT_PRICES`), which a user's YAML or JSON
file extends or overrides::

    gpt-4o-mini: {input: 0.15, output: 0.60}
    "my-org/*":  {input: 0.0, output: 0.0}     # shell-style patterns are allowed

A model with no price has an *unknown* cost, reported as such, never as zero.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cfaug.config import ConfigFileError, read_mapping
from cfaug.llm.errors import BudgetExceeded, LLMConfigError
from cfaug.llm.types import Completion, Request

#: List prices (USD per million tokens) published by OpenAI for a few models, as of 2024-08. Check your
#: provider's current prices and override them with a price table file (``--price-table``).
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "gpt-4o-mini": {"input": 0.15, "output": 0.60},
    "gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.60},
    "gpt-4o": {"input": 2.50, "output": 10.00},
    "gpt-4o-2024-08-06": {"input": 2.50, "output": 10.00},
    "gpt-4-turbo": {"input": 10.00, "output": 30.00},
    "gpt-3.5-turbo": {"input": 0.50, "output": 1.50},
    "gpt-3.5-turbo-0125": {"input": 0.50, "output": 1.50},
}

#: Tokens added per message by chat formatting (role markers), used in the worst-case input estimate.
_PER_MESSAGE_OVERHEAD = 8


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input + tokens_out * self.output) / 1e6


class PriceTable:
    """Model name -> :class:`Price`; exact names first, then shell-style patterns in file order."""

    def __init__(self, prices: Mapping[str, Mapping[str, float]] | None = None, source: str = "built-in") -> None:
        self.source = source
        self._prices: dict[str, Price] = {}
        for name, entry in (prices if prices is not None else DEFAULT_PRICES).items():
            self._prices[str(name)] = _price(name, entry, source)

    @classmethod
    def load(cls, path: str | None) -> PriceTable:
        """The built-in table, updated with the entries of ``path`` (YAML or JSON) when given."""
        table = cls()
        if path is None:
            return table
        try:
            data = read_mapping(path)
        except ConfigFileError as exc:
            raise LLMConfigError(f"price table {exc}") from exc
        for name, entry in data.items():
            table._prices[str(name)] = _price(name, entry, str(path))
        table.source = f"built-in + {path}"
        return table

    def get(self, model: str) -> Price | None:
        if model in self._prices:
            return self._prices[model]
        for pattern, price in self._prices.items():
            if any(ch in pattern for ch in "*?[") and fnmatch.fnmatchcase(model, pattern):
                return price
        return None


def _price(name: Any, entry: Any, source: str) -> Price:
    if not isinstance(entry, Mapping) or "input" not in entry or "output" not in entry:
        raise LLMConfigError(f"price table {source}: entry {name!r} needs 'input' and 'output' (USD per million tokens)")
    try:
        price = Price(float(entry["input"]), float(entry["output"]))
    except (TypeError, ValueError):
        raise LLMConfigError(f"price table {source}: entry {name!r} has a non-numeric price") from None
    if price.input < 0 or price.output < 0:
        raise LLMConfigError(f"price table {source}: entry {name!r} has a negative price")
    return price


@dataclass
class UsageCounts:
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens_in: int = 0
    cached_tokens_out: int = 0
    usage_estimated: int = 0
    cost: float = 0.0

    def add(self, other: UsageCounts) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class UsageLedger:
    """Usage of one model, broken down by (tag, purpose); ``tag`` is usually the method name."""

    model: str
    prices: PriceTable = field(default_factory=PriceTable)
    unparsed: int = 0

    def __post_init__(self) -> None:
        self.price = self.prices.get(self.model)
        self._counts: dict[tuple[str, str], UsageCounts] = {}

    def _bucket(self, tag: str, purpose: str) -> UsageCounts:
        key = (tag, purpose)
        counts = self._counts.get(key)
        if counts is None:
            counts = self._counts[key] = UsageCounts()
        return counts

    def record(self, completion: Completion, tag: str, purpose: str) -> float:
        """Count one answer; returns its cost (0.0 for a cache hit or an unknown price)."""
        c = self._bucket(tag, purpose)
        if completion.cached:
            c.cache_hits += 1
            c.cached_tokens_in += completion.tokens_in
            c.cached_tokens_out += completion.tokens_out
            return 0.0
        c.requests += 1
        c.retries += max(0, completion.attempts - 1)
        c.tokens_in += completion.tokens_in
        c.tokens_out += completion.tokens_out
        c.usage_estimated += completion.usage_estimated
        cost = self.price.cost(completion.tokens_in, completion.tokens_out) if self.price else 0.0
        c.cost += cost
        return cost

    def worst_case_cost(self, request: Request, default_max_tokens: int) -> float:
        """An upper bound of what ``request`` can cost: every prompt byte a token, plus formatting, plus
        the full ``max_tokens`` of output."""
        if self.price is None:
            return 0.0
        n_messages = len(request.messages) if request.messages is not None else 1
        tokens_in = request.text_bytes() + _PER_MESSAGE_OVERHEAD * (n_messages + 1)
        tokens_out = request.max_tokens if request.max_tokens is not None else default_max_tokens
        return self.price.cost(tokens_in, tokens_out)

    def totals(self) -> UsageCounts:
        total = UsageCounts()
        for c in self._counts.values():
            total.add(c)
        return total

    @property
    def spent(self) -> float:
        return self.totals().cost

    def report(self) -> dict[str, Any]:
        """Flat figures for the run summary (and a per-purpose breakdown when there is more than one)."""
        t = self.totals()
        out: dict[str, Any] = {
            "llm_model": self.model,
            "llm_requests": t.requests,
            "llm_retries": t.retries,
            "llm_cache_hits": t.cache_hits,
            "llm_tokens_in": t.tokens_in,
            "llm_tokens_out": t.tokens_out,
            "llm_cost_usd": round(t.cost, 6) if self.price else f"unknown (no price for {self.model!r}; see --price-table)",
        }
        if t.usage_estimated:
            out["llm_usage_estimated"] = f"{t.usage_estimated} answers without usage; tokens estimated from text"
        if t.cache_hits:
            saved = self.price.cost(t.cached_tokens_in, t.cached_tokens_out) if self.price else None
            out["llm_cache_saved_usd"] = round(saved, 6) if saved is not None else "unknown"
        if self.unparsed:
            out["llm_unparsed_items"] = self.unparsed
        if len(self._counts) > 1:
            out["llm_usage"] = {f"{tag}/{purpose}": {k: getattr(c, k) for k in c.__dataclass_fields__}
                                for (tag, purpose), c in sorted(self._counts.items())}
        return out


class BudgetGuard:
    """Keeps spending under ``limit``: a request reserves its worst-case cost before it is sent and
    settles to its real cost when answered. When a reservation does not fit, it waits for requests in
    flight to settle; if it still does not fit with nothing in flight, the budget is spent and every
    caller gets :class:`BudgetExceeded`."""

    def __init__(self, limit: float, spent: float = 0.0) -> None:
        self.limit = limit
        self.spent = spent
        self.reserved = 0.0
        self.in_flight = 0
        self.exhausted: str | None = None
        self._cond: asyncio.Condition | None = None

    async def reserve(self, amount: float) -> None:
        if self._cond is None:
            self._cond = asyncio.Condition()
        async with self._cond:
            while True:
                if self.exhausted:
                    raise BudgetExceeded(self.exhausted)
                if self.spent + self.reserved + amount <= self.limit:
                    self.reserved += amount
                    self.in_flight += 1
                    return
                if self.in_flight == 0:
                    self.exhausted = (
                        f"budget of {self.limit:g} USD reached: {self.spent:.6f} spent, the next request could cost "
                        f"up to {amount:.6f}")
                    self._cond.notify_all()
                    raise BudgetExceeded(self.exhausted)
                await self._cond.wait()

    def loop_closed(self) -> None:
        """Forget the event-loop-bound condition (the next loop creates its own)."""
        self._cond = None

    async def settle(self, reserved: float, cost: float) -> None:
        assert self._cond is not None
        async with self._cond:
            self.reserved -= reserved
            self.spent += cost
            self.in_flight -= 1
            self._cond.notify_all()
