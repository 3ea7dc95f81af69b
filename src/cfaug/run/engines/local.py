"""The local engine: batches run in this process (``workers=1``) or on a pool of worker processes, each
holding one fitted copy of the method.

Workers are forked where the platform allows (they start in milliseconds and share the driver's imported
modules), load the method's artifacts once, run with one thread each (no oversubscription on small
machines) and die with the driver. The driver keeps ``2 x workers`` batches in flight and appends each
finished line as it arrives.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from cfaug.data.records import WorkItem
from cfaug.run.engines.base import ENGINES, IN_FLIGHT_PER_WORKER, Job, OnLine, run_batch, usable_cores

_WORKER: dict[str, Any] = {}


def default_workers(cpus_per_worker: float = 1.0) -> int:
    """Worker processes that fit this machine: usable cores divided by what one worker needs."""
    return max(1, int(usable_cores() // max(cpus_per_worker, 1e-9)))


def limit_threads() -> None:
    """One compute thread per worker process (torch, OpenMP and BLAS pools)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - comes with scikit-learn
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when the driver dies (even by SIGKILL), so no orphan keeps working."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:  # pragma: no cover
            pass


def _init_worker(job: Job) -> None:
    _die_with_parent()
    # SIGTERM ends a worker at once: the driver's handler (stop cleanly, as on Ctrl-C) is the driver's only
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    limit_threads()
    _WORKER["job"] = job
    try:
        _WORKER["method"] = job.build()
    except Exception as exc:  # noqa: BLE001 - raised again from _work, so the driver gets the real error
        _WORKER["error"] = exc


def _work(batch: list[WorkItem]) -> list[dict[str, Any]]:
    if "error" in _WORKER:
        raise _WORKER["error"]
    return run_batch(_WORKER["method"], batch, _WORKER["job"])


@ENGINES.register("local.v1", "this machine: in-process with 1 worker, else a pool of worker processes")
class LocalEngine:
    """See the module docstring. ``workers=None`` sizes the pool from the method's declared CPUs."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers

    def execute(self, job: Job, batches: Sequence[list[WorkItem]], on_line: OnLine) -> dict[str, Any]:
        n = self.workers or default_workers(job.resources.cpus)
        n = max(1, min(n, len(batches))) if batches else 1
        if n == 1:
            method = job.build()
            try:
                for batch in batches:
                    for line in run_batch(method, batch, job):
                        on_line(line)
            finally:
                method.close()
            return {"engine": self.name, "workers": 1, "processes": "in-process"}
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        window = IN_FLIGHT_PER_WORKER * n
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_worker,
                                 initargs=(job,)) as pool:
            queue = iter(batches)
            running: set[Future[list[dict[str, Any]]]] = set()
            try:
                for batch in queue:
                    running.add(pool.submit(_work, batch))
                    if len(running) >= window:
                        done, running = wait(running, return_when=FIRST_COMPLETED)
                        _deliver(done, on_line)
                while running:
                    done, running = wait(running, return_when=FIRST_COMPLETED)
                    _deliver(done, on_line)
            except BaseException as exc:
                for f in running:
                    f.cancel()
                if isinstance(exc, KeyboardInterrupt):  # Ctrl-C or SIGTERM: the batches in flight are not waited for
                    _end_workers(pool)
                raise
        return {"engine": self.name, "workers": n, "processes": ctx.get_start_method()}


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes now (the batches they were running are lost, and run again when the
    run resumes), so that an interrupted driver stops at once instead of waiting for them."""
    end = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if end is not None:
        end()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            process.terminate()


def _deliver(done: set[Future[list[dict[str, Any]]]], on_line: OnLine) -> None:
    for f in done:
        for line in f.result():
            on_line(line)
