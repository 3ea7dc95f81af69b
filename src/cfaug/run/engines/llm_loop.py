"""The LLM loop: the engine of methods whose work unit is one item (LLM methods). One asyncio event loop in
the driver runs the method's ``agenerate`` over the pending items concurrently and hands each finished
result line to ``on_line``, like the batch engines do.

The runner picks it because of the method (``work_unit == "item"``), not by ``--engine``. The method is
the driver's own, already prepared and loaded; its LLM layer bounds the requests really in flight, the
loop only bounds how many coroutines exist at once (:data:`~cfaug.run.engines.base.IN_FLIGHT_PER_WORKER`
per slot of ``concurrency``).

Errors: an item whose error does not stop the run is a failed item (status "error"). An error that stops
the run is raised, except that an LLM backend giving up after every retry (which may concern one request
only) is first weighed by :class:`ServerWatch`. The method's ``aclose`` runs at the end of the loop,
whatever happened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from cfaug.data.records import WorkItem
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.errors import aborts_run
from cfaug.llm.settings import DEFAULT_CONCURRENCY
from cfaug.methods.base import Method
from cfaug.run.engines.base import IN_FLIGHT_PER_WORKER, OnLine
from cfaug.run.results import result_line

#: ``finish(item, counterfactuals, error=None, details=None)``: record one item's result
Finish = Callable[..., None]


class LLMLoop:
    """Runs an item method's ``agenerate`` over work items in one event loop; see the module docstring.
    ``concurrency``: requests in flight at once (None: :data:`~cfaug.llm.settings.DEFAULT_CONCURRENCY`)."""

    name = "llm-loop"

    def __init__(self, concurrency: int | None = None) -> None:
        self.concurrency = concurrency or DEFAULT_CONCURRENCY

    def execute(self, method: Method, items: Sequence[WorkItem], task: Task, schema: Schema,
                on_line: OnLine) -> None:
        """Run every item, calling ``on_line`` with each finished result line. A run-stopping error (a
        clean stop among them: budget spent, server unreachable) is raised after the finished items were
        handed over."""

        def finish(item: WorkItem, cfs: Any, error: str | None = None, details: dict[str, Any] | None = None) -> None:
            on_line(result_line(item, cfs, schema, task, error=error, details=details))

        asyncio.run(run_items(method, items, task, finish, self.concurrency))


def _may_concern_one_item(exc: BaseException) -> bool:
    """Run-stopping errors that may be about one request only: the LLM backend gave up after every
    retry (:class:`~cfaug.llm.errors.LLMUnavailable`), which is what both a server that is down and a
    server that always fails one particular request (HTTP 500 on one prompt) look like."""
    from cfaug.llm.errors import LLMUnavailable

    return isinstance(exc, LLMUnavailable)


class ServerWatch:
    """Tells an item the server keeps failing from a server that is down.

    An item whose request failed after every retry with an error that may concern that item only is held
    as a suspect. Any item answered after it failed shows the server works: the suspects are then failed
    items (written with status "error"; ``--retry-failed`` runs them again) and the run goes on. More
    suspects than requests can be in flight at once, with no answer in between, stop the run (the server
    is down). At the end of the run, suspects no other answer vouched for (e.g. the one item left on a
    rerun) are settled by a probe: when the server answers a minimal request (:meth:`Method.aprobe`) they
    are failed items too; otherwise they stop the run. Suspects that stop the run are not written: they
    stay to do, and a rerun resumes them."""

    def __init__(self, finish: Finish, in_flight: int,
                 probe: Callable[[], Awaitable[bool | None]] | None = None) -> None:
        self.finish, self.limit, self.probe = finish, in_flight + 1, probe
        self.answers = 0
        self.suspects: list[tuple[WorkItem, BaseException, int]] = []

    def answered(self) -> None:
        self.answers += 1
        self._fail_suspects(self.suspects)
        self.suspects = []

    def failed(self, item: WorkItem, exc: BaseException, answers_at_start: int) -> None:
        self.suspects.append((item, exc, answers_at_start))
        if len(self.suspects) >= self.limit:
            raise self.suspects[0][1]

    async def settle(self) -> None:
        """At the end: suspects whose request ran while other items were answered are failed items; the
        others are failed items when the server answers a probe, and stop the run when it does not."""
        confirmed = [s for s in self.suspects if self.answers > s[2]]
        rest = [s for s in self.suspects if self.answers <= s[2]]
        self._fail_suspects(confirmed)
        self.suspects = rest
        if not rest:
            return
        if self.probe is not None and await self.probe():
            self._fail_suspects(rest, "failed after every retry while the server answered a test request; "
                                      "--retry-failed runs it again")
            self.suspects = []
            return
        raise rest[0][1]

    def _fail_suspects(self, suspects: list[tuple[WorkItem, BaseException, int]],
                       note: str = "failed after every retry while the server answered other items; "
                                   "--retry-failed runs it again") -> None:
        for item, exc, _ in suspects:
            self.finish(item, None, f"{type(exc).__name__}: {exc}", {"note": note})


async def run_items(method: Method, pending: Sequence[WorkItem], task: Task, finish: Finish,
                    concurrency: int) -> None:
    """Run ``agenerate`` concurrently; the method's LLM layer bounds real concurrency, the window here
    only bounds how many coroutines exist at once."""
    window = max(1, concurrency * IN_FLIGHT_PER_WORKER)
    watch = ServerWatch(finish, concurrency, method.aprobe)

    async def one(item: WorkItem) -> None:
        answers_at_start = watch.answers
        try:
            res = await method.agenerate(item, task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            if not aborts_run(exc):
                watch.answered()
                finish(item, None, f"{type(exc).__name__}: {exc}", getattr(exc, "details", None))
                return
            if not _may_concern_one_item(exc):
                raise
            watch.failed(item, exc, answers_at_start)
            return
        watch.answered()
        finish(item, res)

    running: set[asyncio.Task[None]] = set()
    try:
        for item in pending:
            running.add(asyncio.ensure_future(one(item)))
            if len(running) >= window:
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                _raise_first(finished)
        while running:
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            _raise_first(finished)
        await watch.settle()
    finally:
        for t in running:
            t.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        await method.aclose()


def _raise_first(finished: set[asyncio.Task[None]]) -> None:
    """Re-raise the first error among finished tasks, after collecting every error (an uncollected one
    is logged later, at garbage collection, as "Task exception was never retrieved")."""
    errors = [exc for t in finished if (exc := t.exception()) is not None]
    if errors:
        raise errors[0]
