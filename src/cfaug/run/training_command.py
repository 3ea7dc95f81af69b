"""``cfaug train``: a method's training stage on its own, saving a model folder for ``--model``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.io import DataError, read_dataset
from cfaug.methods import build_method
from cfaug.run.context import stage_context
from cfaug.run.options import DEFAULT_METHOD, RunOptions
from cfaug.run.outputs import OutputRefused, check_output, output_lock, param_inputs
from cfaug.run.runner import make_schema, make_task_from
from cfaug.run.training import Fitted, fit_or_load
from cfaug.training.store import ArtifactStore


def train_model(method: str, train_data: Any, output: str | Path, log: Any = None, **options: Any) -> Fitted:
    """Fit ``method`` on ``train_data`` (any supported format) and write the model folder ``output``. An
    output that is the training data, holds it, or is a file or a folder of other files is refused
    (:class:`~cfaug.run.outputs.OutputRefused`) before any work; the folder is locked while it is written
    (:func:`~cfaug.run.outputs.output_lock`)."""
    opts = RunOptions.from_mapping({"method": method, **{k: v for k, v in options.items() if v is not None}})
    task = make_task_from(opts)
    schema = make_schema(opts, task)
    m = build_method(opts.method or DEFAULT_METHOD, opts.params, opts.seed, preset=opts.preset)
    if not m.trains:
        raise ConfigError(f"{m.name} has no training stage; use it directly with 'cfaug augment'")
    out = Path(output).expanduser()
    check_output(output, "-o", inputs=[("--train-data", train_data), *param_inputs(opts.params)], folder=True)
    if out.exists() and not (out / "artifact.json").exists() and (not out.is_dir() or any(out.iterdir())):
        what = "a folder of other files" if out.is_dir() else "a file"
        raise OutputRefused(f"-o {output} is {what}, not a model folder; the model folder is written as a whole "
                            "and would replace it: choose a new or empty folder")
    if (out / "artifact.json").exists() and not opts.overwrite:
        raise ConfigError(f"{output} already holds a trained model; pass --overwrite to replace it")
    with output_lock(out):
        data = read_dataset(train_data, task, schema, fmt=opts.input_format, max_chars=opts.max_chars)
        if not data.records:
            raise DataError(f"{data.source}: no usable rows to train on; all {data.rows_read} were rejected")
        kwargs = {"log": log} if log is not None else {}
        ctx = stage_context(opts, **kwargs)
        fitted = fit_or_load(m, task, data.records, str(train_data), ctx, ArtifactStore(opts.model_store),
                             output_dir=out)
    fitted.info.facts["rejected_rows"] = len(data.rejects)
    return fitted
