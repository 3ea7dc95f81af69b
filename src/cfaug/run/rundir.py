"""The run directory: resolved config, manifest, rejects and results appended as each item finishes.

Layout::

    config.json     what was asked (method, parameters, task, columns, seed, input hash)
    manifest.json   versions, seed, input hash, method facts, timings, usage; rewritten at the end
    results.jsonl   one line per finished work item (key, status, counterfactual rows)
    rejects.jsonl   input rows that were not used, with file, row and problem
    summary.json    the end-of-run summary

A killed run is resumed by running the same command again: finished items (lines of
``results.jsonl``) are skipped, a half-written last line is discarded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


class RunDirError(RuntimeError):
    """The run directory belongs to a different configuration or input."""


class RunDir:
    RESULTS = "results.jsonl"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    # -- config ------------------------------------------------------------------------------------------
    def open(self, config: dict[str, Any], *, overwrite: bool = False,
             param_defaults: dict[str, Any] | None = None) -> None:
        """Create the directory or check that an existing one was made by the same config.

        A directory whose run finished no item yet (e.g. it stopped on a bad model path) holds nothing
        worth protecting and is started again with the new config. ``param_defaults``: the declared
        defaults of the method's parameters; a parameter the stored config does not name (it was added to
        the method later) agrees when the new value is its default, which is what the old run used."""
        self.path.mkdir(parents=True, exist_ok=True)
        cfg_file = self.path / "config.json"
        if cfg_file.exists() and not overwrite:
            old = json.loads(cfg_file.read_text(encoding="utf-8"))
            new = json.loads(json.dumps(config))
            if old == new:
                return
            if _agrees_with_new_defaults(old, new, json.loads(json.dumps(param_defaults or {}, default=str))):
                self.write_json("config.json", config)
                return
            if self.finished():
                raise RunDirError(
                    f"{self.path} holds a run with a different configuration (differs in: "
                    f"{', '.join(_differences(old, new))}); use another --run-dir or pass --overwrite to start it again")
            overwrite = True
        if overwrite:
            for name in (self.RESULTS, "rejects.jsonl", "summary.json", "manifest.json"):
                (self.path / name).unlink(missing_ok=True)
        self.write_json("config.json", config)

    def write_json(self, name: str, obj: Any) -> None:
        tmp = self.path / (name + ".tmp")
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.path / name)

    def read_json(self, name: str) -> Any:
        return json.loads((self.path / name).read_text(encoding="utf-8"))

    # -- results -----------------------------------------------------------------------------------------
    def finished(self) -> dict[str, dict[str, Any]]:
        """Finished items by key; drops a trailing partial line left by a killed process."""
        path = self.path / self.RESULTS
        if not path.exists():
            return {}
        data = path.read_bytes()
        good_end = data.rfind(b"\n") + 1
        if good_end < len(data):
            with open(path, "r+b") as fh:
                fh.truncate(good_end)
            data = data[:good_end]
        done: dict[str, dict[str, Any]] = {}
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            # a later line for the same key is a retry of a failed item (--retry-failed)
            if obj["key"] not in done or done[obj["key"]].get("status") == "error":
                done[obj["key"]] = obj
        return done

    def appender(self) -> ResultAppender:
        return ResultAppender(self.path / self.RESULTS)

    def write_lines(self, name: str, objs: Iterable[dict[str, Any]]) -> None:
        tmp = self.path / (name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for o in objs:
                fh.write(json.dumps(o, ensure_ascii=False, default=str) + "\n")
        os.replace(tmp, self.path / name)

    def read_lines(self, name: str) -> Iterator[dict[str, Any]]:
        path = self.path / name
        if not path.exists():
            return
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)


def _agrees_with_new_defaults(old: dict[str, Any], new: dict[str, Any], defaults: dict[str, Any]) -> bool:
    """Whether ``old`` and ``new`` differ only in method parameters that ``old`` lacks and ``new`` holds
    at their declared default."""
    a, b = dict(old.get("params") or {}), dict(new.get("params") or {})
    added = set(b) - set(a)
    if not added or any(k not in defaults or b[k] != defaults[k] for k in added):
        return False
    a.update({k: b[k] for k in added})
    return {**old, "params": a} == new


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Keys whose values differ, one level deep inside mappings (``params.min_similarity``)."""
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{k}.{sub}" for sub in sorted(set(a) | set(b)) if a.get(sub) != b.get(sub)]
        else:
            out.append(k)
    return out


class ResultAppender:
    """Appends one JSON line per finished item and flushes it, so a SIGKILL loses at most the line
    being written (which :meth:`RunDir.finished` discards)."""

    def __init__(self, path: Path) -> None:
        self._fh = open(path, "a", encoding="utf-8")

    def append(self, obj: dict[str, Any]) -> None:
        self._fh.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> ResultAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
