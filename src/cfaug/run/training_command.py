"""``cfaug train``: a method's training stage on its own, saving a model folder for ``--model``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.io import DataError, read_dataset
from cfaug.methods import build_method
from cfaug.run.context import stage_context
from cfaug.run.options import DEFAULT_METHOD, RunOptions
from cfaug.run.runner import make_schema, make_task_from
from cfaug.run.training import Fitted, fit_or_load
from cfaug.training.store import ArtifactStore


def train_model(method: str, train_data: Any, output: str | Path, log: Any = None, **options: Any) -> Fitted:
    """Fit ``method`` on ``train_data`` (any supported format) and write the model folder ``output``."""
    opts = RunOptions.from_mapping({"method": method, **{k: v for k, v in options.items() if v is not None}})
    task = make_task_from(opts)
    schema = make_schema(opts, task)
    m = build_method(opts.method or DEFAULT_METHOD, opts.params, opts.seed, preset=opts.preset)
    if not m.trains:
        raise ConfigError(f"{m.name} has no training stage; use it directly with 'cfaug augment'")
    data = read_dataset(train_data, task, schema, fmt=opts.input_format, max_chars=opts.max_chars)
    if not data.records:
        raise DataError(f"{data.source}: no usable rows to train on; all {data.rows_read} were rejected")
    kwargs = {"log": log} if log is not None else {}
    ctx = stage_context(opts, **kwargs)
    out = Path(output).expanduser()
    if (out / "artifact.json").exists() and not opts.overwrite:
        raise ConfigError(f"{output} already holds a trained model; pass --overwrite to replace it")
    fitted = fit_or_load(m, task, data.records, str(train_data), ctx, ArtifactStore(opts.model_store), output_dir=out)
    fitted.info.facts["rejected_rows"] = len(data.rejects)
    return fitted
