"""Micro-batching for local engines: concurrent ``send`` calls are gathered into batches of up to
``batch_size`` requests with the same sampling settings, and each batch runs in a worker thread so the
event loop stays responsive."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from cfaug.llm.backends.base import Backend
from cfaug.llm.settings import LLMSettings
from cfaug.llm.types import Completion, Request

#: Generation parameters that must be equal within one batch (``max_tokens`` may differ).
BATCH_KEYS = ("temperature", "top_p", "top_k", "repetition_penalty")


class BatchingBackend(Backend):
    """Base class of in-process engines. Subclasses implement :meth:`load` and :meth:`generate_batch`."""

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings)
        self._pending: list[tuple[Request, asyncio.Future[Completion]]] = []
        self._worker: asyncio.Task[None] | None = None
        self._loaded = False
        self.batches = 0  # batches run so far (for tests and reports)

    def load(self) -> None:
        """Load the model (called once, before the first batch)."""
        raise NotImplementedError

    def generate_batch(self, requests: list[Request]) -> list[Completion]:
        """Answer ``requests`` (same sampling settings) in one go; runs in a worker thread."""
        raise NotImplementedError

    def check(self) -> None:
        if not self._loaded:
            self.load()
            self._loaded = True

    async def send(self, request: Request) -> Completion:
        fut: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending.append((request, fut))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._drain())
        return await fut

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let every coroutine that is about to send enqueue first
        while self._pending:
            self._pending = [(r, f) for r, f in self._pending if not f.done()]
            if not self._pending:
                break
            key = _batch_key(self._pending[0][0])
            batch, rest = [], []
            for r, f in self._pending:
                (batch if len(batch) < self.settings.batch_size and _batch_key(r) == key else rest).append((r, f))
            self._pending = rest
            try:
                if not self._loaded:
                    await asyncio.to_thread(self.check)
                results = await asyncio.to_thread(self.generate_batch, [r for r, _ in batch])
            except Exception as exc:  # noqa: BLE001 - every caller of the batch gets the error
                for _, f in batch:
                    if not f.done():
                        f.set_exception(exc)
                continue
            self.batches += 1
            for (_, f), res in zip(batch, results):
                if not f.done():
                    f.set_result(res)
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            try:
                await self._worker
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        self._worker = None


def _batch_key(request: Request) -> str:
    key = {k: request.params.get(k) for k in BATCH_KEYS}
    key["chat"] = request.messages is not None
    return json.dumps(key, sort_keys=True, default=str)


def cut_at_stop(text: str, stop: Any) -> str:
    """``text`` up to the first of the ``stop`` strings (a string or a list), as an API server would."""
    if not stop:
        return text
    stops = [stop] if isinstance(stop, str) else list(stop)
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return text[:cut] if cut >= 0 else text
