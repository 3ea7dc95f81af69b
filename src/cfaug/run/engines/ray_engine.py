"""The Ray engine: the batches of one run spread over the actors of a Ray cluster, from a laptop to many
GPU nodes (``pip install "cfaug[ray]"``; see docs/scaling.md).

Who does what:

* The driver (the ``cfaug augment`` process) stays in charge of the run. It connects to a cluster (or
  starts a private one on this machine and stops it afterwards), starts the actors, hands out batches
  and receives their result lines. It alone calls ``on_line``, so it is the only process that appends to
  the run directory; actors never write anything the run depends on.
* Each actor is a long-lived Ray worker process holding one fitted copy of the method: it rebuilds the
  method from the :class:`~cfaug.run.engines.base.Job` once, loads its artifacts once, then turns
  batches of work items into JSON-ready result lines with :func:`~cfaug.run.engines.base.run_batch`
  (so a failing item is isolated exactly as in the local engine).

What travels:

* to each actor, once: the Job (method name, parameters, seed, task, schema, device, resources) and the
  method's class (so a method registered by the calling script, not only cfaug's own, can be built);
* when the fitted artifacts must reach other machines: their folder, packed by the driver into one tar
  archive held in Ray's object store. An actor that sees the folder's path (same machine, or a shared
  file system) loads it in place; one that does not unpacks the archive once per node into
  ``<model store>/.shipped/<digest>`` and loads that copy;
* per task: a batch of work items out, its result lines (keyed by item key) back.

The driver keeps about two batches queued per actor, so an actor never waits for its next batch while
the driver handles the previous one. The time spent connecting and building the actors is measured
apart (``startup_seconds``) from the work itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cfaug.data.records import WorkItem
from cfaug.errors import aborts_run
from cfaug.run.engines.base import ENGINES, IN_FLIGHT_PER_WORKER, Job, OnLine, run_batch, usable_cores

#: batches queued per actor: one running, one waiting
IN_FLIGHT_PER_ACTOR = IN_FLIGHT_PER_WORKER


class RayEngineError(RuntimeError):
    """The cluster could not run the job: an actor could not start, died, or never got its resources."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        from cfaug.config import ConfigError

        raise ConfigError('the ray engine needs Ray: pip install "cfaug[ray]"') from None
    return ray


# -- shipping the artifacts ------------------------------------------------------------------------------
def pack_artifacts(folder: str | os.PathLike[str]) -> bytes:
    """The folder's files as an uncompressed tar archive in memory (model weights barely compress)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"artifact folder {folder} does not exist")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buf.getvalue()


def unpack_artifacts(data: bytes, root: str | os.PathLike[str]) -> Path:
    """``data`` (from :func:`pack_artifacts`) unpacked into ``root/<digest>``, once: a folder that is
    already there is reused, and concurrent unpackers on one machine (several actors) each unpack into
    a private folder and the first to finish renames it into place, so no one reads a half-written copy."""
    root = Path(root)
    final = root / hashlib.sha256(data).hexdigest()[:24]
    if final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".", suffix=".partial", dir=root))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")  # refuses absolute paths, '..' and links leaving the folder
            else:  # pragma: no cover - Python before 3.10.12 / 3.11.4
                for member in tar.getmembers():
                    if not (member.isfile() or member.isdir()) or Path(member.name).is_absolute() \
                            or ".." in Path(member.name).parts:
                        raise ValueError(f"refusing to unpack {member.name!r} from a shipped artifact")
                tar.extractall(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():  # not a lost race: a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def shipped_root() -> Path:
    """Where an actor unpacks artifacts it cannot see: ``.shipped`` in the node's model store."""
    from cfaug.training.store import default_store_dir

    return default_store_dir() / ".shipped"


# -- the actor -------------------------------------------------------------------------------------------
def _limit_threads(n: int) -> None:
    """``n`` compute threads in this actor (torch, OpenMP and BLAS pools), so actors do not oversubscribe
    the cores Ray gave them."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


class MethodWorker:
    """Body of a Ray actor: one fitted method, built once (wrapped with ``ray.remote`` by the engine)."""

    def __init__(self, job: Job, method_cls: type | None, package: list[Any] | None) -> None:
        threads = max(1, int(job.resources.cpus))
        _limit_threads(threads)
        from cfaug.methods.base import METHODS

        if method_cls is not None and job.method not in METHODS:
            METHODS.register(method_cls.name, "shipped by the Ray driver")(method_cls)
        if job.device.startswith("cuda"):
            import ray

            if ray.get_gpu_ids() and os.environ.get("CUDA_VISIBLE_DEVICES"):
                # Ray shows this actor only the GPUs it was given: the first of them is cuda:0 here
                job = replace(job, device="cuda:0")
        folder: str | None = job.artifacts
        self.shipped = False
        if job.artifacts is not None and not os.path.isdir(job.artifacts):
            if not package:
                raise RayEngineError(f"artifact folder {job.artifacts} is not visible on this node and the "
                                     "driver did not ship it")
            import ray

            folder = str(unpack_artifacts(ray.get(package[0]), shipped_root()))
            self.shipped = True
        self.job = job
        self.error: BaseException | None = None
        try:
            self.method = job.build(folder)
        except Exception as exc:  # a configuration error is raised again by ready(), where the driver sees it
            if not aborts_run(exc):
                raise
            self.error, self.method = exc, None
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(threads)
        self.artifacts = folder

    def ready(self) -> dict[str, Any]:
        """Where this actor runs and what it loaded (called once, to time the start-up); raises the
        configuration error that kept it from building the method."""
        import ray

        if self.error is not None:
            raise self.error

        return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid(), "artifacts": self.artifacts,
                "shipped": self.shipped, "device": self.job.device}

    def run(self, batch: list[WorkItem]) -> list[dict[str, Any]]:
        return run_batch(self.method, batch, self.job)

    def close(self) -> None:
        if self.method is not None:
            self.method.close()


# -- the engine ------------------------------------------------------------------------------------------
@ENGINES.register("ray.v1", "a Ray cluster (or a private one on this machine): one fitted method per actor")
class RayEngine:
    """See the module docstring.

    ``workers``: actors to start (default: the cluster's CPUs divided by the CPUs one method needs, and
    no more than its GPUs allow when it runs on CUDA). ``address``: the cluster to join (``auto``,
    ``host:port`` or ``ray://...``); without it, a running ``ray.init`` in this process is used, else a
    private cluster is started on this machine for the run. ``ship_artifacts``: pack the artifact folder
    into the object store (default: only when the cluster has nodes other than this one).
    ``startup_timeout``: seconds to wait for every actor to be placed and built.
    """

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None, *,
                 ship_artifacts: bool | None = None, startup_timeout: float = 600.0) -> None:
        if workers is not None and workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.address = address
        self.ship_artifacts = ship_artifacts
        self.startup_timeout = startup_timeout

    def execute(self, job: Job, batches: Sequence[list[WorkItem]], on_line: OnLine) -> dict[str, Any]:
        ray = _ray()
        start = time.perf_counter()
        facts: dict[str, Any] = {"engine": self.name, "workers": 0, "address": self.address,
                                 "startup_seconds": 0.0, "ray_version": ray.__version__}
        if not batches:
            return facts
        started_here = False
        if not ray.is_initialized():
            if self.address:
                _init_ray(ray, address=self.address, log_to_driver=False)
            else:
                cores = usable_cores()
                if self.workers:  # honour --workers on a small machine, as the local engine does
                    cores = max(cores, int(-(-self.workers * job.resources.cpus // 1)))
                _init_ray(ray, num_cpus=cores, include_dashboard=False, log_to_driver=False)
                facts["address"] = "local"
            started_here = True
        else:
            facts["address"] = self.address or "running"
        actors: list[Any] = []
        try:
            facts["connect_seconds"] = round(time.perf_counter() - start, 3)
            actors = self._start(ray, job, len(batches), private=started_here and not self.address, facts=facts)
            facts["startup_seconds"] = round(time.perf_counter() - start, 3)
            self._run(ray, actors, batches, on_line)
            facts["work_seconds"] = round(time.perf_counter() - start - facts["startup_seconds"], 3)
            with contextlib.suppress(Exception):
                ray.get([a.close.remote() for a in actors], timeout=30)
        finally:
            for a in actors:
                with contextlib.suppress(Exception):
                    ray.kill(a)
            if started_here:
                ray.shutdown()
        return facts

    # -- start-up --------------------------------------------------------------------------------------
    def _start(self, ray: Any, job: Job, n_batches: int, *, private: bool,
               facts: dict[str, Any]) -> list[Any]:
        total = ray.cluster_resources()
        cpus = max(float(job.resources.cpus), 0.0)
        gpus = float(job.resources.gpus) if job.device.startswith("cuda") else 0.0
        if gpus > 0 and total.get("GPU", 0.0) < gpus:
            raise RayEngineError(f"{job.method} asks for {gpus:g} GPU per worker on {job.device}, but the Ray "
                                 f"cluster has {total.get('GPU', 0.0):g} GPUs; add GPU nodes or use --device cpu")
        n = self.workers
        if n is None:
            n = int(total.get("CPU", 1.0) // cpus) if cpus > 0 else usable_cores()
            if gpus > 0:
                n = min(n, int(total.get("GPU", 0.0) // gpus))
            n = max(1, n)
        n = max(1, min(n, n_batches))
        options: dict[str, Any] = {"num_cpus": cpus, "num_gpus": gpus}
        memory = int(job.resources.memory_mb) * 2**20
        # Ray's "memory" resource is a scheduling promise, not a limit: ask for it only when every actor's
        # share fits the cluster, so a small machine still runs the job
        if memory > 0 and n * memory <= total.get("memory", 0.0):
            options["memory"] = memory
        if private and (n * cpus > total.get("CPU", 0.0) + 1e-9):
            raise RayEngineError(f"{n} workers x {cpus:g} CPUs do not fit the {total.get('CPU', 0):g} CPUs of "
                                 "this machine; lower --workers")
        facts.update(workers=n, resources_per_worker={"cpus": cpus, "gpus": gpus,
                                                     "memory_mb": options.get("memory", 0) // 2**20})
        package = self._package(ray, job)
        facts["artifacts_shipped_bytes"] = package[1] if package else 0
        from cfaug.methods.base import METHODS

        method_cls = METHODS.get(job.method) if job.method in METHODS else None
        Actor = ray.remote(MethodWorker)
        actors = [Actor.options(**options).remote(job, method_cls, [package[0]] if package else None)
                  for _ in range(n)]
        try:
            info = self._wait_ready(ray, actors, job, options, total)
        except BaseException:
            for a in actors:
                with contextlib.suppress(Exception):
                    ray.kill(a)
            raise
        facts["nodes"] = len({i["node"] for i in info})
        facts["actors_unpacked_artifacts"] = sum(bool(i["shipped"]) for i in info)
        return actors

    def _package(self, ray: Any, job: Job) -> tuple[Any, int] | None:
        """The artifact folder as one object in the store, when it has to travel."""
        if job.artifacts is None:
            return None
        ship = self.ship_artifacts
        if ship is None:
            alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
            try:
                here = ray.get_runtime_context().get_node_id()
            except Exception:  # noqa: BLE001 - e.g. a Ray Client driver, outside the cluster
                here = None
            ship = alive != {here}
        if not ship:
            return None
        data = pack_artifacts(job.artifacts)
        return ray.put(data), len(data)

    def _wait_ready(self, ray: Any, actors: list[Any], job: Job, options: dict[str, Any],
                    total: dict[str, float]) -> list[dict[str, Any]]:
        refs = [a.ready.remote() for a in actors]
        done, pending = ray.wait(refs, num_returns=len(refs), timeout=self.startup_timeout)
        if pending:
            raise RayEngineError(
                f"{len(pending)} of {len(refs)} Ray workers for {job.method} did not start within "
                f"{self.startup_timeout:g} s; each asks for {_describe(options)} and the cluster has "
                f"{_describe(total)}: lower --workers or add nodes")
        try:
            return ray.get(refs)
        except ray.exceptions.RayActorError as exc:
            raise RayEngineError(f"a Ray worker could not build {job.method}: {_cause(exc)}") from exc
        except ray.exceptions.RayTaskError as exc:
            _raise_run_stopper(exc)
            raise RayEngineError(f"a Ray worker could not build {job.method}: {_cause(exc)}") from exc

    # -- the work --------------------------------------------------------------------------------------
    def _run(self, ray: Any, actors: list[Any], batches: Sequence[list[WorkItem]], on_line: OnLine) -> None:
        queue = iter(batches)
        running: dict[Any, int] = {}

        def submit(i: int) -> None:
            batch = next(queue, None)
            if batch is not None:
                running[actors[i].run.remote(batch)] = i

        for _ in range(IN_FLIGHT_PER_ACTOR):
            for i in range(len(actors)):
                submit(i)
        while running:
            (ref,), _ = ray.wait(list(running), num_returns=1)
            i = running.pop(ref)
            try:
                lines = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                raise RayEngineError(f"Ray worker {i} died while running a batch (node lost, out of memory or "
                                     f"killed?): {_cause(exc)}; rerun the same command to resume") from exc
            except ray.exceptions.RayTaskError as exc:
                _raise_run_stopper(exc)
                raise RayEngineError(f"Ray worker {i} failed on a batch: {_cause(exc)}") from exc
            submit(i)
            for line in lines:
                on_line(line)


def _init_ray(ray: Any, **kwargs: Any) -> None:
    """``ray.init(**kwargs)``, keeping the process's SIGTERM handler when one was set from Python (the
    ``cfaug`` command's stops the run cleanly, as Ctrl-C does; ``ray.init`` would put one that exits)."""
    before = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    try:
        ray.init(**kwargs)
    finally:
        if callable(before) and signal.getsignal(signal.SIGTERM) is not before:
            signal.signal(signal.SIGTERM, before)


def _describe(resources: dict[str, Any]) -> str:
    parts = []
    for key in ("num_cpus", "CPU", "num_gpus", "GPU", "memory"):
        if key in resources:
            value = resources[key]
            label = key.replace("num_", "").upper()
            parts.append(f"{value / 2**30:.1f} GiB memory" if key == "memory" else f"{value:g} {label}")
    return ", ".join(parts) or "nothing"


def _raise_run_stopper(exc: BaseException) -> None:
    """Raise the worker's own error when it is one that stops the run (a configuration error), so that
    the command reports it as such (exit 2) rather than as a cluster failure."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and aborts_run(cause):
        raise cause from None


def _cause(exc: BaseException) -> str:
    """The meaningful line of a Ray error (they carry whole remote tracebacks, with colour codes)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and not type(cause).__module__.startswith("ray"):
        return f"{type(cause).__name__}: {cause}"
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(getattr(exc, "error_msg", None) or exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    # a failed __init__ ends with the exception it raised; other errors start with what happened
    return lines[-1] if getattr(exc, "_actor_init_failed", False) else lines[0]
