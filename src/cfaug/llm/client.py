"""The LLM client: the one object methods talk to.

``await client.chat(messages, max_tokens=..., seed=..., sample=...)`` goes through, in order: the request
cache (a hit returns at once and costs nothing), de-duplication of identical requests in flight, the
budget guard, the concurrency limit, the RPM/TPM limits, then the backend (which retries transient
failures). Every answer is counted in the usage ledger under the client's ``tag`` (the method name) and
the call's ``purpose``, and so is every request that got no answer (an HTTP error, retries exhausted, a
timeout, an interrupted run): sent is sent, answered or not.

Answers are scrubbed of the credentials in use (API key, URL passwords) before they are cached or
returned; an answer that proved unusable is dropped from the cache with :meth:`LLMClient.forget`. Given a
``usage_file`` (``<run dir>/llm_usage.json``), usage and the budget cover every session of the run.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from typing import Any

from cfaug.llm.backends import BACKENDS, Backend
from cfaug.llm.backends.base import end_tally, tally_attempts
from cfaug.llm.cache import ResponseCache, fingerprint
from cfaug.llm.errors import LLMConfigError, LLMError
from cfaug.llm.ledger import BudgetGuard, Price, PriceTable, UsageLedger
from cfaug.llm.ratelimit import Limits
from cfaug.llm.redact import redact_secrets
from cfaug.llm.settings import DEFAULT_CONCURRENCY, LLMSettings
from cfaug.llm.types import Completion, Message, Request, estimate_tokens
from cfaug.registry import RegistryError

#: ``max_tokens`` assumed for budget and rate estimates when a request sets none.
DEFAULT_MAX_TOKENS = 512


class LLMClient:
    """Caching, limited, accounted access to one backend. Create it with :func:`create_client`."""

    def __init__(self, backend: Backend, *, cache: ResponseCache | None = None, ledger: UsageLedger | None = None,
                 concurrency: int = DEFAULT_CONCURRENCY, refresh: bool = False, max_budget: float | None = None,
                 limits: Limits | None = None, tag: str = "default") -> None:
        self.backend = backend
        self.cache = cache
        self.ledger = ledger or UsageLedger(backend.model)
        self.concurrency = concurrency
        self.refresh = refresh
        self.tag = tag
        self.limits = limits if limits is not None and limits.active else None
        if max_budget is not None and self.ledger.price is None:
            raise LLMConfigError(
                f"--max-budget needs a price for model {backend.model!r}; add it to a price table "
                f"(--price-table FILE with '{backend.model}: {{input: USD per 1M tokens, output: ...}}')")
        # the budget covers the whole run: what earlier sessions spent (a ledger with a file) counts
        self.budget = BudgetGuard(max_budget, spent=self.ledger.spent) if max_budget is not None else None
        self._secrets = [s for s in backend.secrets if s]
        self._sem: asyncio.Semaphore | None = None
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._backend_id = backend.kind
        self._model_id = backend.model_id
        self.closed = False

    # -- public calls --------------------------------------------------------------------------------
    async def chat(self, messages: Sequence[Message], *, seed: int | None = None, sample: int = 0,
                   purpose: str = "generate", **params: Any) -> Completion:
        """Answer a chat conversation. ``params`` are generation parameters (``max_tokens``,
        ``temperature``, ``top_p``, ``stop``...)."""
        req = Request(messages=tuple({"role": m["role"], "content": m["content"]} for m in messages),
                      params=params, seed=seed, sample=sample)
        return await self.send(req, purpose=purpose)

    async def complete(self, prompt: str, *, seed: int | None = None, sample: int = 0,
                       purpose: str = "generate", **params: Any) -> Completion:
        """Continue a raw prompt (completions endpoint, or plain generation for local models)."""
        return await self.send(Request(prompt=prompt, params=params, seed=seed, sample=sample), purpose=purpose)

    async def send(self, request: Request, *, purpose: str = "generate") -> Completion:
        key = fingerprint(self._backend_id, self._model_id, request)
        if self.cache is not None and not self.refresh:
            hit = self.cache.get(key)
            if hit is not None:
                completion = Completion.from_cache(hit)
                completion.cache_key = key
                self._scrub(completion)  # an entry written before answers were scrubbed
                self._name_model(completion)  # ... or before a local model's path was replaced by its name
                self.ledger.record(completion, self.tag, purpose)
                return completion
        shared = self._inflight.get(key)
        if shared is not None:
            try:
                completion = await asyncio.shield(shared)
            except asyncio.CancelledError:
                if shared.cancelled():  # the first asker was cancelled, not us: ask ourselves
                    return await self.send(request, purpose=purpose)
                raise
            cached = Completion(**{**completion.__dict__, "cached": True, "attempts": 0})
            self.ledger.record(cached, self.tag, purpose)
            return cached
        fut: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            completion = await self._call(request, purpose)
            completion.cache_key = key
        except asyncio.CancelledError:
            fut.cancel()
            raise
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark it retrieved: nobody may be waiting
            raise
        else:
            fut.set_result(completion)
        finally:
            del self._inflight[key]
        if self.cache is not None:
            self.cache.put(key, self._backend_id, self._model_id, completion.to_cache())
        return completion

    async def _call(self, request: Request, purpose: str) -> Completion:
        reserved = 0.0
        if self.budget is not None:
            reserved = self.ledger.worst_case_cost(request, DEFAULT_MAX_TOKENS)
            await self.budget.reserve(reserved)
        try:
            sem = self._sem
            if sem is None:
                sem = self._sem = asyncio.Semaphore(self.concurrency)
            async with sem:
                if self.limits is not None:
                    est = estimate_tokens(request.prompt_as_text()) + (request.max_tokens or DEFAULT_MAX_TOKENS)
                    await self.limits.acquire(est)
                    completion = await self._sent(request, purpose)
                    self.limits.settle(est, completion.tokens_in + completion.tokens_out)
                else:
                    completion = await self._sent(request, purpose)
        except BaseException:
            if self.budget is not None:
                await self.budget.settle(reserved, 0.0)
            raise
        self._scrub(completion)
        self._name_model(completion)
        cost = self.ledger.record(completion, self.tag, purpose)
        if self.budget is not None:
            await self.budget.settle(reserved, cost)
        return completion

    async def _sent(self, request: Request, purpose: str) -> Completion:
        """The backend's answer to ``request``; when there is none (an error, a cancellation), the request
        is counted in the ledger as sent and failed, with every attempt the backend made."""
        tally, token = tally_attempts()
        try:
            return await self.backend.send(request)
        except BaseException:
            attempts = tally.sent if self.backend.counts_attempts else 1
            if attempts:
                self.ledger.record_failure(self.tag, purpose, attempts)
            raise
        finally:
            end_tally(token)

    async def probe(self) -> bool:
        """Whether the model answers a minimal request (one output token; never cached, counted in the
        ledger as purpose ``probe``). Tells a server that is down, or fails every request, from one that
        fails particular requests only."""
        request = Request(messages=({"role": "user", "content": "Reply with the word OK."},),
                          params={"max_tokens": 1, "temperature": 0.0})
        try:
            await self._call(request, "probe")
        except LLMError:
            return False
        return True

    def _scrub(self, completion: Completion) -> None:
        """Mask the credentials in use in what a server sent back, before it is cached or returned. The
        answer's text loses only the exact secrets (patterns could hit ordinary words of an answer)."""
        if self._secrets and any(s in completion.text for s in self._secrets):
            completion.text = redact_secrets(completion.text, self._secrets, patterns=False)
        if self._secrets and completion.reasoning and any(s in completion.reasoning for s in self._secrets):
            completion.reasoning = redact_secrets(completion.reasoning, self._secrets, patterns=False)
        if self._secrets and completion.refusal and any(s in completion.refusal for s in self._secrets):
            completion.refusal = redact_secrets(completion.refusal, self._secrets, patterns=False)
        if completion.model:
            completion.model = redact_secrets(completion.model, self._secrets)

    def _name_model(self, completion: Completion) -> None:
        """Name a model run on this machine as the data may show it (:attr:`Backend.public_model`, never a
        local path), with its file's sha256."""
        name = self.backend.public_model
        if name is not None:
            completion.model = name
        completion.model_sha256 = self.backend.model_sha256

    def forget(self, completions: Iterable[Completion]) -> None:
        """Drop these answers from the cache (they proved unusable, e.g. never parsed): the next time the
        same requests are made, they are sent to the model instead of replaying the failure."""
        if self.cache is None:
            return
        for key in dict.fromkeys(c.cache_key for c in completions if c.cache_key):
            self.cache.delete(key)

    # -- lifecycle -----------------------------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        """Usage figures for the run summary."""
        return self.ledger.report()

    async def aclose(self) -> None:
        """Close loop-bound resources (HTTP session), commit the cache and write the usage ledger (whatever
        fails on the way: the ledger is written even when closing the session or the cache raises)."""
        try:
            await self.backend.aclose()
            if self.cache is not None:
                await asyncio.to_thread(self.cache.flush)
        finally:
            self.ledger.save()
            self._sem = None  # loop-bound: a later event loop makes new ones
            if self.budget is not None:
                self.budget.loop_closed()

    def close(self) -> None:
        """Commit and close the cache and release the backend."""
        if self.closed:
            return
        self.closed = True
        try:
            self.ledger.save()
        finally:
            self.backend.close()
            if self.cache is not None:
                self.cache.close()


def create_client(settings: LLMSettings, *, tag: str = "default",
                  usage_file: str | os.PathLike[str] | None = None) -> LLMClient:
    """Build a client from settings: resolve backend and model, read the key from the environment, open
    the cache, load prices. Raises :class:`~cfaug.llm.errors.LLMConfigError` on anything unusable.

    ``usage_file``: the run's usage ledger (``<run dir>/llm_usage.json``, :data:`~cfaug.llm.ledger.USAGE_FILE`);
    earlier sessions' usage is loaded from it, so the report and ``max_budget`` cover the whole run."""
    s = settings.resolved()
    try:
        backend_cls = BACKENDS.get(s.backend)
    except RegistryError as exc:
        raise LLMConfigError(str(exc)) from None
    backend = backend_cls(s)
    backend.check()
    ledger = UsageLedger(s.model, PriceTable.load(s.price_table), path=usage_file)
    if getattr(backend, "free", False) and ledger.price is None:
        ledger.price = Price(0.0, 0.0)  # a model run here costs nothing; its tokens are still counted
    cache = ResponseCache(s.cache_dir) if s.cache else None
    limits = Limits(s.rpm, s.tpm)
    # no more requests in flight than a local server has slots: the others would wait out their timeout there
    concurrency = min(s.concurrency, getattr(backend, "slots", s.concurrency))
    return LLMClient(backend, cache=cache, ledger=ledger, concurrency=concurrency, refresh=s.refresh,
                     max_budget=s.max_budget, limits=limits, tag=tag)
