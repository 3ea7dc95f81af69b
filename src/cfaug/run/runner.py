"""The runner: read, reject, prepare the method, generate (batched or concurrent), append results to the
run directory as they finish, show progress, write the output and a summary."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cfaug.data.contract import counterfactual_row, output_columns
from cfaug.data.io import DEFAULT_MAX_CHARS, DataError, Dataset, read_dataset, write_rows
from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Method, build_config
from cfaug.run.manifest import hash_source, versions
from cfaug.run.rundir import RunDir


@dataclass
class RunSummary:
    """End-of-run figures, printed by the CLI and saved as ``summary.json``."""

    rows_read: int = 0
    rows_rejected: int = 0
    items: int = 0
    items_resumed: int = 0
    items_without_counterfactual: int = 0
    items_failed: int = 0
    counterfactuals_written: int = 0
    candidates_filtered_out: int = 0
    flip_rate_own_judge: float | None = None
    own_judge: str | None = None
    seconds: float = 0.0
    peak_memory_mb: float = 0.0
    run_dir: str = ""
    output: str | None = None
    rejects_file: str | None = None
    columns: list[str] = field(default_factory=list)  #: the output's columns, in order
    extra: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [
            f"rows read              {self.rows_read}",
            f"rows rejected          {self.rows_rejected}" + (f"  (see {self.rejects_file})" if self.rows_rejected else ""),
            f"work items             {self.items}" + (f"  ({self.items_resumed} already done)" if self.items_resumed else ""),
            f"counterfactuals        {self.counterfactuals_written}",
            f"filtered out           {self.candidates_filtered_out}",
            f"items with none        {self.items_without_counterfactual}",
        ]
        if self.items_failed:
            out.append(f"items failed           {self.items_failed}  (errors in results.jsonl)")
        if self.flip_rate_own_judge is not None:
            out.append(f"flip rate ({self.own_judge}, the method's own judge)  {self.flip_rate_own_judge:.1%}")
        for k, v in self.extra.items():
            out.append(f"{k:<22} {v}")
        out.append(f"time                   {self.seconds:.1f} s  (peak memory {self.peak_memory_mb:.0f} MB)")
        out.append(f"run directory          {self.run_dir}")
        if self.output:
            out.append(f"output                 {self.output}")
        return out


@dataclass
class RunOptions:
    method: str = "auto-cad"
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    keep_failed: bool = False
    max_chars: int = DEFAULT_MAX_CHARS
    input_format: str | None = None
    output_format: str | None = None
    overwrite: bool = False
    progress: bool = True
    limit: int | None = None
    retry_failed: bool = False


def build_method(name: str, params: dict[str, Any], seed: int) -> Method:
    import cfaug.methods  # noqa: F401  (registers the built-in methods)

    cls = METHODS.get(name)
    return cls(build_config(cls, params), seed=seed)


def run(
    source: Any,
    task: Task,
    schema: Schema | None,
    run_dir: str | Path,
    options: RunOptions,
    output: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Run a method over ``source`` and return the summary and the output rows (also written to
    ``output`` when given)."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    start = time.perf_counter()
    data = read_dataset(source, task, schema, fmt=options.input_format, max_chars=options.max_chars)
    method = build_method(options.method, options.params, options.seed)
    rd = RunDir(run_dir)
    config = {
        "method": method.name,
        "params": method.identity_params(),
        "task": {"name": task.name, "target": task.target, "edit_roles": list(task.edit_roles)},
        "schema": asdict(data.schema),
        "seed": options.seed,
        "input": data.source,
        "input_hash": hash_source(source),
        "max_chars": options.max_chars,
        "limit": options.limit,
    }
    rd.open(config, overwrite=options.overwrite)
    rd.write_lines("rejects.jsonl", (r.to_json() for r in data.rejects))
    for r in data.rejects[:20]:
        log(f"rejected: {r.message()}")
    if len(data.rejects) > 20:
        log(f"... and {len(data.rejects) - 20} more rejected rows (see {rd.path / 'rejects.jsonl'})")
    if not data.records:
        raise DataError(f"{data.source}: no usable rows; all {data.rows_read} were rejected "
                        f"(see {rd.path / 'rejects.jsonl'})")

    records = data.records[: options.limit] if options.limit else data.records
    facts = method.prepare(records, task)
    items = [WorkItem(r, t) for r in records for t in task.targets(r)]
    done = rd.finished()
    pending = [it for it in items if it.key not in done
               or (options.retry_failed and done[it.key].get("status") == "error")]
    manifest = {
        "versions": versions(),
        "seed": options.seed,
        "input": data.source,
        "input_hash": config["input_hash"],
        "method": method.name,
        "method_facts": facts,
        "command": sys.argv,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    rd.write_json("manifest.json", manifest)

    stopped: str | None = None
    bar = tqdm(total=len(items), initial=len(items) - len(pending), desc=method.name, unit="item",
               disable=not options.progress, file=sys.stderr)
    try:
        with rd.appender() as out:
            def finish(item: WorkItem, cfs: list[Counterfactual] | None, error: str | None = None,
                       details: dict[str, Any] | None = None) -> None:
                line = _result_line(item, cfs, error, data, task, details)
                out.append(line)
                done[item.key] = line
                bar.update(1)

            if method.is_async:
                try:
                    asyncio.run(_run_async(method, pending, task, finish))
                except Exception as exc:  # noqa: BLE001 - a clean stop (budget spent, LLM unreachable) keeps results
                    if not getattr(exc, "clean_stop", False):
                        raise
                    stopped = f"{type(exc).__name__}: {exc}"
                    log(f"stopped early: {stopped}; rerun the same command to resume")
            else:
                _run_batched(method, pending, task, finish)
    finally:
        bar.close()
        extra = method.report() if hasattr(method, "report") else {}
        method.close()

    rows, summary = _collect(items, done, options.keep_failed)
    summary.rows_read = data.rows_read
    summary.rows_rejected = len(data.rejects)
    summary.items_resumed = len(items) - len(pending)
    summary.seconds = time.perf_counter() - start
    summary.peak_memory_mb = _peak_memory_mb()
    summary.run_dir = str(rd.path)
    summary.rejects_file = str(rd.path / "rejects.jsonl")
    summary.extra = extra or {}
    if stopped:
        summary.extra["stopped"] = stopped
    summary.columns = output_columns(data.schema, data.extra_columns)
    if output is not None:
        write_rows(rows, output, options.output_format, columns=summary.columns)
        summary.output = str(output)
    manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    manifest["summary"] = asdict(summary)
    rd.write_json("manifest.json", manifest)
    rd.write_json("summary.json", asdict(summary))
    return summary, rows


def _peak_memory_mb() -> float:
    """Peak resident memory of this process. Linux's VmHWM belongs to this program alone (ru_maxrss also
    counts the parent's memory when a process was forked from a large one)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _result_line(item: WorkItem, cfs: list[Counterfactual] | None, error: str | None, data: Dataset,
                 task: Task, details: dict[str, Any] | None = None) -> dict[str, Any]:
    if error is not None:
        line: dict[str, Any] = {
            "key": item.key, "source_id": item.record.id, "target": item.target, "status": "error",
            "error": error, "counterfactuals": []}
        if details:
            line["details"] = details
        return line
    rows = []
    for cf in cfs or []:
        row = counterfactual_row(cf, data.schema, task)
        row["meta"] = json.loads(json.dumps(cf.meta, default=_jsonable))
        rows.append(row)
    status = "ok" if any(cf.passed for cf in cfs or []) else "no_counterfactual"
    return {"key": item.key, "source_id": item.record.id, "target": item.target, "status": status,
            "counterfactuals": rows}


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _run_batched(method: Method, pending: Sequence[WorkItem], task: Task,
                 finish: Callable[..., None]) -> None:
    bs = max(1, method.batch_size)
    for i in range(0, len(pending), bs):
        batch = pending[i: i + bs]
        try:
            results = method.generate(batch, task)
        except Exception as exc:  # noqa: BLE001 - fall back to one by one to isolate the bad item
            if len(batch) == 1:
                finish(batch[0], None, f"{type(exc).__name__}: {exc}")
                continue
            results = []
            for it in batch:
                try:
                    results.append(method.generate([it], task)[0])
                except Exception as exc2:  # noqa: BLE001
                    results.append(exc2)
        for it, res in zip(batch, results):
            if isinstance(res, Exception):
                finish(it, None, f"{type(res).__name__}: {res}")
            else:
                finish(it, res)


async def _run_async(method: Method, pending: Sequence[WorkItem], task: Task,
                     finish: Callable[..., None]) -> None:
    """Run ``agenerate`` concurrently; the method's own LLM layer bounds real concurrency, the window
    here only bounds how many coroutines exist at once."""
    window = max(1, int(getattr(method, "concurrency", 64)) * 2)
    queue = iter(pending)

    async def one(item: WorkItem) -> None:
        try:
            res = await method.agenerate(item, task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            if getattr(exc, "aborts_run", False) or type(exc).__name__ == "BudgetExceeded":
                raise
            finish(item, None, f"{type(exc).__name__}: {exc}", getattr(exc, "details", None))
            return
        finish(item, res)

    running: set[asyncio.Task[None]] = set()
    try:
        for item in queue:
            running.add(asyncio.ensure_future(one(item)))
            if len(running) >= window:
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                _raise_first(finished)
        while running:
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            _raise_first(finished)
    finally:
        for t in running:
            t.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        aclose = getattr(method, "aclose", None)
        if aclose is not None:
            await aclose()


def _raise_first(finished: set[asyncio.Task[None]]) -> None:
    """Re-raise the first error among finished tasks, after collecting every error (an uncollected one
    is logged later, at garbage collection, as "Task exception was never retrieved")."""
    errors = [exc for t in finished if (exc := t.exception()) is not None]
    if errors:
        raise errors[0]


def _collect(items: Sequence[WorkItem], done: dict[str, dict[str, Any]], keep_failed: bool) -> tuple[list[dict[str, Any]], RunSummary]:
    rows: list[dict[str, Any]] = []
    s = RunSummary(items=len(items))
    judged = flipped = 0
    for it in items:
        line = done.get(it.key)
        if line is None:
            continue
        if line["status"] == "error":
            s.items_failed += 1
            continue
        if line["status"] == "no_counterfactual":
            s.items_without_counterfactual += 1
        for row in line["counterfactuals"]:
            meta = row.get("meta") or {}
            passed = meta.get("passed", True)
            if not passed:
                s.candidates_filtered_out += 1
            if passed or keep_failed:
                rows.append(row)
            own = meta.get("own_judge")
            if passed and isinstance(own, dict) and "flipped" in own:
                judged += 1
                flipped += bool(own["flipped"])
                s.own_judge = own.get("name", s.own_judge)
    s.counterfactuals_written = len(rows)
    s.flip_rate_own_judge = flipped / judged if judged else None
    return rows, s
