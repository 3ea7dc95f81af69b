"""One run directory per method under ``DIR/runs/<method>/``, run by :func:`cfaug.run.runner.run` on the
comparison's sample, so a rerun resumes where a method stopped.

- A method whose run finished (its ``summary.json`` says complete) with the same settings and the same
  sample is not run again: :data:`RUN_RECORD` in its run directory holds the key of what it was asked and
  the seconds it took over its sessions.
- A method that needs what was not given (an LLM endpoint, a local model path, a pairs file, another
  task) raises a :class:`~cfaug.config.ConfigError` before any item: it is reported as ``skipped`` with
  the message as reason. Any other error is ``failed`` with its message; the comparison goes on.
- ``--budget`` is one budget for the whole comparison: each LLM method may spend what the methods before
  it left (its ledger's earlier sessions included).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.llm.ledger import USAGE_FILE, read_usage
from cfaug.llm.settings import OPERATIONAL
from cfaug.run.options import RunOptions
from cfaug.run.runner import OutputError

RUNS = "runs"
OUTPUT_FILE = "counterfactuals.jsonl"
#: what the comparison asked of a run directory: ``{"key", "seconds", "sessions"}``
RUN_RECORD = "compare_run.json"
#: run options that change neither what a method produces nor where (left out of the key)
NOT_IN_KEY = ("progress", "workers", "engine", "batch_size", "concurrency", "ray_address", "device",
              "model_store", "overwrite", "retry_failed", "run_dir", "limit")


@dataclass
class MethodRun:
    """How one method's run went."""

    method: str  #: the name as asked (``auto-cad``)
    registered: str  #: the registered name (``auto-cad.v1``)
    status: str  #: ``ok``, ``skipped`` or ``failed``
    reason: str | None = None
    run_dir: Path | None = None
    output: Path | None = None
    seconds: float | None = None
    reused: bool = False  #: True when the finished run was taken as it was, without calling the runner
    summary: dict[str, Any] = field(default_factory=dict)  #: the run's summary.json
    llm: dict[str, Any] | None = None  #: requests, input/output tokens, cost (None: no LLM call)
    stopped: bool = False  #: the run stopped early (budget spent, server unreachable); a rerun resumes

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def method_names(methods: list[str]) -> list[tuple[str, str]]:
    """(name as asked, registered name) for each method, in order, each registered method once; an unknown
    name raises :class:`~cfaug.registry.RegistryError`."""
    from cfaug.methods import METHODS

    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for m in methods:
        name = m.strip()
        if not name:
            continue
        full = METHODS.resolve(name)
        if full not in seen:
            seen.add(full)
            out.append((name, full))
    return out


def params_for(registered: str, shared: dict[str, Any], scoped: dict[str, dict[str, Any]], name: str,
               preset: str | None = None) -> dict[str, Any]:
    """The parameters of one method: the shared ones its config declares, then those given for this method
    alone (``-p METHOD:KEY=VALUE``). The shared LLM settings (``llm``) go only to a method that calls an LLM
    with these parameters (an LLM method, or one whose ``mode`` is ``llm``, e.g. CoBA's LLM path): CoBA
    offline is the same run whether or not an endpoint was given for the other methods."""
    from cfaug.methods import METHODS, method_params

    cls = METHODS.get(registered)
    known = {f.name for f in dataclasses.fields(cls.Config)}
    params = {k: v for k, v in shared.items() if k in known and k != "llm"}
    for key in (name, registered, registered.rsplit(".v", 1)[0]):
        params.update(scoped.get(key, {}))
    if "llm" in known and "llm" in shared and "llm" not in params:
        effective = method_params(registered, params, preset)
        if getattr(cls, "work_unit", None) == "item" or str(effective.get("mode", "")) == "llm":
            params["llm"] = shared["llm"]
    return params


def unknown_shared_params(registered: list[str], shared: dict[str, Any]) -> list[str]:
    """Shared parameters that no compared method declares (a typo: reported as a bad option)."""
    from cfaug.methods import METHODS

    known: set[str] = set()
    for r in registered:
        known |= {f.name for f in dataclasses.fields(METHODS.get(r).Config)}
    return sorted(k for k in shared if k not in known and k != "llm")


def run_key(registered: str, options: dict[str, Any], sample_sha: str, train_sha: str | None) -> str:
    """What decides a method's output: its registered name, parameters (without the operational LLM
    settings), the run options that matter, the sample and the training data."""
    params = typed_params(registered, dict(options.get("params") or {}), options.get("preset"))
    if isinstance(params.get("llm"), dict):
        params["llm"] = {k: v for k, v in params["llm"].items() if k not in OPERATIONAL}
    opts = {k: v for k, v in options.items() if k not in NOT_IN_KEY and k != "params"}
    blob = json.dumps({"method": registered, "params": params, "options": opts, "sample": sample_sha,
                       "train": train_sha}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def typed_params(registered: str, params: dict[str, Any], preset: str | None) -> dict[str, Any]:
    """The method's parameters as its config types them (``"2"`` and ``2`` alike), preset applied; as given
    when they do not make a config (the run then says why)."""
    from cfaug.config import build_config, config_dict
    from cfaug.methods import METHODS, method_params

    cls = METHODS.get(registered)
    try:
        return config_dict(build_config(cls.Config, method_params(registered, params, preset), owner=cls.name))
    except Exception:  # noqa: BLE001 - the run reports a bad parameter
        return params


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def llm_figures(run_dir: Path) -> dict[str, Any] | None:
    """Requests, tokens and cost from the run directory's usage ledger (None when it made no LLM call);
    cost is None when the model has no known price."""
    if not (run_dir / USAGE_FILE).exists():
        return None
    usage = read_usage(run_dir)
    if not usage:
        return None
    cost = usage.get("llm_cost_usd")
    return {"requests": int(usage.get("llm_requests", 0)), "input_tokens": int(usage.get("llm_tokens_in", 0)),
            "output_tokens": int(usage.get("llm_tokens_out", 0)),
            "cost_usd": float(cost) if isinstance(cost, (int, float)) else None,
            "cache_hits": int(usage.get("llm_cache_hits", 0)), "model": usage.get("llm_model")}


def without_counterfactual(run_dir: Path) -> tuple[int, dict[str, int]]:
    """(items of the run with no counterfactual, why: reason -> items), one reason per item as
    :func:`cfaug.run.summary.why_none` gives it, so the reasons add up to the count."""
    from cfaug.run.rundir import RunDir
    from cfaug.run.summary import why_none

    reasons: dict[str, int] = {}
    for line in RunDir(run_dir).finished().values():
        if line.get("status") == "no_counterfactual":
            why = why_none(line)
            reasons[why] = reasons.get(why, 0) + 1
    return sum(reasons.values()), reasons


def run_method(name: str, registered: str, out_dir: Path, sample_path: Path, options: dict[str, Any],
               key: str, log: Callable[[str], None], max_budget: float | None = None) -> MethodRun:
    """Run (or resume, or reuse) one method into ``out_dir/runs/<name>``; never raises for the method's own
    errors (see the module docstring). ``max_budget``: what this method's run may have spent in all (its
    ledger counts its earlier sessions), for methods that call an LLM."""
    from cfaug.run.rundir import RunDirError
    from cfaug.run.runner import run

    run_dir = out_dir / RUNS / name
    output = run_dir / OUTPUT_FILE
    record_path = run_dir / RUN_RECORD
    record = read_json(record_path) or {}
    summary = read_json(run_dir / "summary.json") or {}
    rel = Path(RUNS) / name
    result = MethodRun(name, registered, "ok", run_dir=rel, output=rel / OUTPUT_FILE)
    if record.get("key") == key and summary.get("complete") and output.exists():
        result.reused = True
        result.seconds = record.get("seconds")
        result.summary = summary
        result.llm = llm_figures(run_dir)
        log(f"{name}: finished earlier, reused ({run_dir})")
        return _judge_summary(result)
    opts = dict(options)
    opts["params"] = dict(opts.get("params") or {})
    if max_budget is not None and isinstance(opts["params"].get("llm"), dict):
        opts["params"]["llm"] = {**opts["params"]["llm"], "max_budget": max(0.0, max_budget)}
    opts["run_dir"] = str(run_dir)
    # the time of earlier sessions counts while their results are kept (a run resumed, or taken as it was)
    earlier = float(record.get("seconds") or summary.get("seconds") or 0.0)
    log(f"{name}: running ({registered}) into {run_dir}")
    start = time.perf_counter()
    try:
        run_options = RunOptions.from_mapping({k: v for k, v in opts.items() if v is not None or k == "method"})
        s, _ = run(str(sample_path), run_options, output=output, log=log)
    except OutputError as exc:
        return _failed(result, exc, log)
    except ConfigError as exc:
        result.status, result.reason = "skipped", str(exc)
        result.run_dir = result.output = None
        log(f"{name}: skipped: {exc}")
        return result
    except RunDirError as exc:
        return _failed(result, exc, log)
    except Exception as exc:  # noqa: BLE001 - one method's failure never ends the comparison
        log("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip())
        return _failed(result, exc, log)
    seconds = (earlier if s.items_resumed else 0.0) + (time.perf_counter() - start)
    result.seconds = round(seconds, 3)
    result.summary = dataclasses.asdict(s)
    result.llm = llm_figures(run_dir)
    sessions = int(record.get("sessions", 0)) + 1 if s.items_resumed else 1
    _write_json(record_path, {"key": key, "method": registered, "seconds": result.seconds, "sessions": sessions,
                              "complete": s.complete})
    if not s.complete:
        result.status, result.stopped = "failed", True
        result.reason = (f"stopped early ({s.stop_reason}); {s.items_not_done} of {s.items} items not done; "
                         "rerun the same command to resume")
    elif s.items_failed and not s.counterfactuals_written:
        result.status = "failed"
        result.reason = f"every item that ran failed ({s.items_failed}; first: {s.first_error})"
    return _judge_summary(result)


def _judge_summary(result: MethodRun) -> MethodRun:
    """Notes on failed items of an otherwise finished run (the status stays ``ok``)."""
    s = result.summary
    if result.status == "ok" and s.get("items_failed"):
        result.reason = (f"{s['items_failed']} of {s.get('items')} items failed (first: {s.get('first_error')}); "
                         "the others are compared")
    return result


def _failed(result: MethodRun, exc: BaseException, log: Callable[[str], None]) -> MethodRun:
    result.status, result.reason = "failed", f"{type(exc).__name__}: {exc}"
    log(f"{result.method}: failed: {result.reason}")
    return result


def _write_json(path: Path, obj: Any) -> None:
    from cfaug.run.outputs import write_text_atomic

    write_text_atomic(path, json.dumps(obj, indent=2, default=str) + "\n")
