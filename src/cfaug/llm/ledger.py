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
import dataclasses
import fnmatch
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfaug.config import ConfigFileError, read_mapping
from cfaug.llm.errors import UNREADABLE, BudgetExceeded, LLMConfigError
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
    """Usage of one (tag, purpose). ``requests``: requests sent, answered or not (a retry is not a new
    request); ``retries``: the extra attempts they took; ``failed``: requests that got no answer after
    every attempt (HTTP errors, timeouts, an interrupted run); ``cache_hits``: answers from the cache."""

    requests: int = 0
    retries: int = 0
    failed: int = 0
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


#: The ledger's file in a run directory: usage of every session of the run, so figures and the budget
#: cover the whole run, not only its last session.
USAGE_FILE = "llm_usage.json"
_USAGE_VERSION = 1


class UsageLedger:
    """Usage of one model, broken down by (tag, purpose); ``tag`` is usually the method name.

    With a ``path`` (``<run dir>/llm_usage.json``, see :data:`USAGE_FILE`), the ledger is cumulative over
    the sessions of a run: the figures of earlier sessions are loaded on creation, :meth:`report` and
    :attr:`spent` include them, and the file is rewritten (atomically) at most every
    :attr:`SAVE_SECONDS` while answers arrive and by :meth:`save` when the client closes. A process killed
    outright loses at most the last :attr:`SAVE_SECONDS` of counting.

    Unreadable answers are counted twice: ``llm_unparsed_answers`` (questions whose every attempt was
    unreadable) and ``llm_unparsed_items`` (distinct work items with at least one such question in their
    latest attempt; an item run again starts with a clean slate, see :meth:`item_started`), and
    ``llm_unparsed_reasons`` splits the latter by why their last unreadable answer failed (its
    :class:`~cfaug.llm.errors.ParseError` kind: cut off at max_tokens, reasoning never closed...).
    """

    #: Least time between two writes of the file while answers arrive.
    SAVE_SECONDS = 0.5

    def __init__(self, model: str, prices: PriceTable | None = None,
                 path: str | os.PathLike[str] | None = None) -> None:
        self.model = model
        self.prices = prices if prices is not None else PriceTable()
        self.price = self.prices.get(self.model)
        self.path = Path(path) if path is not None else None
        self._counts: dict[tuple[str, str], UsageCounts] = {}   # this session
        self._earlier: dict[tuple[str, str], UsageCounts] = {}  # earlier sessions of the run
        self.earlier_sessions = 0
        self.unparsed_answers = 0          # this session
        self._earlier_unparsed_answers = 0
        self._unparsed_items: set[str] = set()  # item keys, all sessions (latest attempt of each item)
        self._item_reasons: dict[str, str] = {}  # item key -> why its last unreadable question failed
        self._anonymous_unparsed = 0       # unreadable questions asked outside any item, all sessions
        self._anonymous_reasons: dict[str, int] = {}
        self._dirty = False
        self._saved_at = 0.0
        if self.path is not None and self.path.exists():
            self._load(self.path)

    # -- persistence ---------------------------------------------------------------------------------
    def _load(self, path: Path) -> None:
        problem = f"{path} is not a usable LLM usage file; delete it to count this run's usage afresh"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LLMConfigError(f"{problem} ({exc})") from None
        if not isinstance(data, dict) or data.get("version") != _USAGE_VERSION:
            raise LLMConfigError(f"{problem} (unknown format)")
        try:
            for entry in data.get("usage", []):
                counts = UsageCounts(**{k: entry[k] for k in UsageCounts.__dataclass_fields__ if k in entry})
                self._earlier.setdefault((str(entry["tag"]), str(entry["purpose"])), UsageCounts()).add(counts)
            self.earlier_sessions = int(data.get("sessions", 0))
            self._earlier_unparsed_answers = int(data.get("unparsed_answers", 0))
            self._unparsed_items = {str(k) for k in data.get("unparsed_items", [])}
            self._anonymous_unparsed = int(data.get("unparsed_without_item", 0))
            self._item_reasons = {str(k): str(v) for k, v in dict(data.get("unparsed_reasons", {})).items()
                                  if str(k) in self._unparsed_items}
            self._anonymous_reasons = {str(k): int(v) for k, v in
                                       dict(data.get("unparsed_reasons_without_item", {})).items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise LLMConfigError(f"{problem} ({type(exc).__name__}: {exc})") from None

    def save(self, force: bool = True) -> None:
        """Write the file (when the ledger has one and something changed). Without ``force``, only when the
        last write is at least :attr:`SAVE_SECONDS` old; a failed unforced write is tried again later."""
        if self.path is None or not self._dirty:
            return
        now = time.monotonic()
        if not force and now - self._saved_at < self.SAVE_SECONDS:
            return
        merged = self._merged()
        data = {
            "version": _USAGE_VERSION,
            "model": self.model,
            "price": dataclasses.asdict(self.price) if self.price is not None else None,
            "sessions": self.earlier_sessions + 1,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "usage": [{"tag": tag, "purpose": purpose, **dataclasses.asdict(c)}
                      for (tag, purpose), c in sorted(merged.items())],
            "unparsed_answers": self._earlier_unparsed_answers + self.unparsed_answers,
            "unparsed_items": sorted(self._unparsed_items),
            "unparsed_without_item": self._anonymous_unparsed,
            "unparsed_reasons": dict(sorted(self._item_reasons.items())),
            "unparsed_reasons_without_item": self._anonymous_reasons,
        }
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            if force:
                raise LLMConfigError(f"cannot write the LLM usage file {self.path}: {exc}") from exc
            return
        self._dirty = False
        self._saved_at = now

    def _changed(self) -> None:
        self._dirty = True
        if self.path is not None:
            self.save(force=False)

    # -- counting ------------------------------------------------------------------------------------
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
            self._changed()
            return 0.0
        c.requests += 1
        c.retries += max(0, completion.attempts - 1)
        c.tokens_in += completion.tokens_in
        c.tokens_out += completion.tokens_out
        c.usage_estimated += completion.usage_estimated
        cost = self.price.cost(completion.tokens_in, completion.tokens_out) if self.price else 0.0
        c.cost += cost
        self._changed()
        return cost

    def record_failure(self, tag: str, purpose: str, attempts: int) -> None:
        """Count one request that got no answer after ``attempts`` attempts (an HTTP error, retries
        exhausted, a timeout, a cancellation): it was sent, so it counts in ``requests`` (and its retries
        in ``retries``) as well as in ``failed``. It costs nothing (servers bill answers)."""
        if attempts < 1:
            return
        c = self._bucket(tag, purpose)
        c.requests += 1
        c.retries += attempts - 1
        c.failed += 1
        self._changed()

    def item_started(self, item: str) -> None:
        """Work item ``item`` is being run (again): forget that an earlier attempt had unreadable answers."""
        if item in self._unparsed_items:
            self._unparsed_items.discard(item)
            self._item_reasons.pop(item, None)
            self._changed()

    def record_unparsed(self, item: str | None, reason: str | None = None) -> None:
        """A question got no readable answer in any attempt, while working on ``item`` (None: outside any
        work item; each such question then counts as an item of its own); ``reason``: why the last attempt
        failed, in a few words (a :class:`~cfaug.llm.errors.ParseError` kind)."""
        self.unparsed_answers += 1
        reason = reason or UNREADABLE
        if item is None:
            self._anonymous_unparsed += 1
            self._anonymous_reasons[reason] = self._anonymous_reasons.get(reason, 0) + 1
        else:
            self._unparsed_items.add(item)
            self._item_reasons[item] = reason
        self._changed()

    @property
    def unparsed_items(self) -> int:
        return len(self._unparsed_items) + self._anonymous_unparsed

    def unparsed_reasons(self) -> dict[str, int]:
        """Items counted in :attr:`unparsed_items` by why their last unreadable answer failed, most first."""
        counts = dict(self._anonymous_reasons)
        untold = self._anonymous_unparsed - sum(counts.values())  # counted by a version without reasons
        if untold > 0:
            counts[UNREADABLE] = counts.get(UNREADABLE, 0) + untold
        for item in self._unparsed_items:
            reason = self._item_reasons.get(item, UNREADABLE)
            counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def worst_case_cost(self, request: Request, default_max_tokens: int) -> float:
        """An upper bound of what ``request`` can cost: every prompt byte a token, plus formatting, plus
        the full ``max_tokens`` of output."""
        if self.price is None:
            return 0.0
        n_messages = len(request.messages) if request.messages is not None else 1
        tokens_in = request.text_bytes() + _PER_MESSAGE_OVERHEAD * (n_messages + 1)
        tokens_out = request.max_tokens if request.max_tokens is not None else default_max_tokens
        return self.price.cost(tokens_in, tokens_out)

    # -- figures -------------------------------------------------------------------------------------
    def _merged(self) -> dict[tuple[str, str], UsageCounts]:
        merged: dict[tuple[str, str], UsageCounts] = {}
        for source in (self._earlier, self._counts):
            for key, c in source.items():
                merged.setdefault(key, UsageCounts()).add(c)
        return merged

    def totals(self) -> UsageCounts:
        """Usage of the whole run (every session when the ledger has a file)."""
        total = UsageCounts()
        for c in (*self._earlier.values(), *self._counts.values()):
            total.add(c)
        return total

    def session_totals(self) -> UsageCounts:
        """Usage of this session only."""
        total = UsageCounts()
        for c in self._counts.values():
            total.add(c)
        return total

    @property
    def spent(self) -> float:
        """Cost of the whole run so far (earlier sessions included)."""
        return self.totals().cost

    @property
    def spent_earlier(self) -> float:
        """Cost of the earlier sessions of the run."""
        return sum(c.cost for c in self._earlier.values())

    def report(self) -> dict[str, Any]:
        """Flat figures for the run summary: the whole run's (every session's, when the ledger has a file),
        this session's when there were earlier ones, and a per-purpose breakdown when there is more than
        one."""
        t = self.totals()
        out: dict[str, Any] = {
            "llm_model": self.model,
            "llm_requests": t.requests,
            "llm_retries": t.retries,
            **({"llm_failed_requests": t.failed} if t.failed else {}),
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
        if self.unparsed_items:
            out["llm_unparsed_items"] = self.unparsed_items
            out["llm_unparsed_reasons"] = self.unparsed_reasons()
        unparsed_answers = self._earlier_unparsed_answers + self.unparsed_answers
        if unparsed_answers:
            out["llm_unparsed_answers"] = unparsed_answers
        if self.earlier_sessions:
            s = self.session_totals()
            out["llm_sessions"] = self.earlier_sessions + 1
            out["llm_session_requests"] = s.requests
            out["llm_session_cost_usd"] = round(s.cost, 6) if self.price else "unknown"
        merged = self._merged()
        if len(merged) > 1:
            out["llm_usage"] = {f"{tag}/{purpose}": dataclasses.asdict(c) for (tag, purpose), c in sorted(merged.items())}
        return out


def read_usage(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The usage figures (as :meth:`UsageLedger.report` gives them) kept in ``run_dir``, or ``{}`` when the
    run made no LLM call: for a summary written without running the method (a rerun of a finished run)."""
    path = Path(run_dir) / USAGE_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        model, price = str(data.get("model", "")), data.get("price")
    except (OSError, ValueError, AttributeError):
        return {}
    prices = PriceTable({model: price}, source=str(path)) if isinstance(price, Mapping) else PriceTable({})
    ledger = UsageLedger(model, prices, path=path)
    out = ledger.report()  # the file's sessions all count as earlier ones: drop the (empty) session figures
    for key in ("llm_sessions", "llm_session_requests", "llm_session_cost_usd"):
        out.pop(key, None)
    if ledger.earlier_sessions > 1:
        out["llm_sessions"] = ledger.earlier_sessions
    return out


class BudgetGuard:
    """Keeps spending under ``limit`` (``spent``: what the run spent before, in earlier sessions): a request reserves its worst-case cost before it is sent and
    settles to its real cost when answered. When a reservation does not fit, it waits for requests in
    flight to settle; if it still does not fit with nothing in flight, the budget is spent and every
    caller gets :class:`BudgetExceeded`."""

    def __init__(self, limit: float, spent: float = 0.0) -> None:
        self.limit = limit
        self.spent = spent
        self.earlier = spent  # spent before this guard started (earlier sessions of the run)
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
                    earlier = f" ({self.earlier:.6f} of it in earlier sessions of this run)" if self.earlier else ""
                    self.exhausted = (
                        f"budget of {self.limit:g} USD reached: {self.spent:.6f} spent{earlier}, the next request "
                        f"could cost up to {amount:.6f}")
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
