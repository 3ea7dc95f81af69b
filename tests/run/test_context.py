"""The stage context of a run is made in one place (the device resolved once) and the training stage's
context is derived from it in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfaug.device import DeviceError
from cfaug.run.context import stage_context
from cfaug.run.options import RunOptions
from cfaug.training.context import FitContext, StageContext


def test_stage_context_carries_the_resolved_device_and_the_run_options():
    logged = []
    ctx = stage_context(RunOptions(device="cpu", seed=7, progress=False, concurrency=3), log=logged.append,
                        run_dir=Path("run"))
    assert (ctx.device, ctx.seed, ctx.progress, ctx.concurrency, ctx.run_dir) == ("cpu", 7, False, 3, Path("run"))
    ctx.log("hello")
    assert logged == ["hello"]


def test_a_wrongly_spelled_device_fails_when_the_context_is_made():
    with pytest.raises(DeviceError):
        stage_context(RunOptions(device="gpu0"))


def test_the_fit_context_carries_the_stage_settings_but_not_the_run_directory(tmp_path):
    log = print
    ctx = StageContext(device="cuda:1", seed=3, progress=False, log=log, concurrency=5, run_dir=tmp_path / "run")
    fit = FitContext.from_stage(ctx, artifact_dir=tmp_path / "art")
    assert (fit.device, fit.seed, fit.progress, fit.log, fit.concurrency) == ("cuda:1", 3, False, log, 5)
    assert fit.artifact_dir == tmp_path / "art" and fit.run_dir is None and fit.dev_records == []
    assert FitContext.from_stage(ctx, artifact_dir=tmp_path, run_dir=ctx.run_dir).run_dir == tmp_path / "run"
