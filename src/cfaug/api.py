"""The Python API. It mirrors ``cfaug augment``: same options, same output contract."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from cfaug.data.schema import Schema
from cfaug.data.tasks import make_task
from cfaug.run.runner import RunOptions, RunSummary, run


def build_schema(text_col: str | None = None, label_col: str | None = None, id_col: str | None = None,
                 premise_col: str | None = None, hypothesis_col: str | None = None) -> Schema:
    text_cols = {}
    if text_col:
        text_cols["text"] = text_col
    if premise_col:
        text_cols["premise"] = premise_col
    if hypothesis_col:
        text_cols["hypothesis"] = hypothesis_col
    return Schema(text_cols=text_cols, label_col=label_col, id_col=id_col)


def run_augment(
    data: Any,
    method: str = "auto-cad",
    *,
    task: str = "sentiment",
    target: str = "opposite",
    edit_side: str = "premise",
    levels: tuple[str, ...] | None = None,
    text_col: str | None = None,
    label_col: str | None = None,
    id_col: str | None = None,
    premise_col: str | None = None,
    hypothesis_col: str | None = None,
    run_dir: str | Path | None = None,
    output: str | Path | None = None,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    keep_failed: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    limit: int | None = None,
    input_format: str | None = None,
    output_format: str | None = None,
    max_chars: int | None = None,
    retry_failed: bool = False,
) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Run ``method`` over ``data`` and return (summary, output rows). See :func:`augment`."""
    task_obj = make_task(task, target=target, edit_side=edit_side, levels=levels)
    schema = build_schema(text_col, label_col, id_col, premise_col, hypothesis_col)
    opts = RunOptions(method=method, params=dict(params or {}), seed=seed, keep_failed=keep_failed,
                      overwrite=overwrite, progress=progress, limit=limit, input_format=input_format,
                      output_format=output_format, retry_failed=retry_failed)
    if max_chars is not None:
        opts.max_chars = max_chars
    if run_dir is None:
        with tempfile.TemporaryDirectory(prefix="cfaug-run-") as tmp:
            return run(data, task_obj, schema, tmp, opts, output=output, log=lambda m: None if not progress else print(m))
    return run(data, task_obj, schema, run_dir, opts, output=output)


def augment(data: Any, method: str = "auto-cad", **kwargs: Any) -> Any:
    """Make counterfactuals for ``data`` and return them as a ``datasets.Dataset``.

    ``data`` is a path (CSV, TSV, JSONL, Parquet, or a ``save_to_disk`` folder), a ``datasets.Dataset``,
    a pandas DataFrame or a list of dicts. Keyword arguments are those of :func:`run_augment`
    (``task``, ``target``, ``text_col``, ``label_col``, ``run_dir``, ``params``, ``seed``...).
    Rows follow the output contract of :mod:`cfaug.data.contract`; ``meta`` is a JSON string column.

    >>> import cfaug  # doctest: +SKIP
    >>> ds = cfaug.augment([{"text": "A great, moving film.", "label": "pos"}], params={"min_similarity": 0})  # doctest: +SKIP
    """
    import json

    import datasets

    kwargs.setdefault("progress", False)
    summary, rows = run_augment(data, method, **kwargs)
    # column-wise, so that a run with nothing to write still has the contract's columns
    return datasets.Dataset.from_dict(
        {c: [json.dumps(r.get(c)) if c == "meta" else r.get(c) for r in rows] for c in summary.columns})
