"""cfaug.training.steps: the record of resumable training steps inside an artifact folder."""

from __future__ import annotations

import json

from cfaug.data.fingerprint import hash_records
from cfaug.data.records import Record
from cfaug.training.context import FitContext
from cfaug.training.steps import DATA_KEY, MADE_WITH_KEY, RECORD_FILE, Step, StepRecord, step_context

STEPS = (Step("a", ("x",), facts=("a",), files=("a.txt",)),
         Step("b", ("y",), facts=("b1", "b2"), files=("b",)),
         Step("c", ("z",), facts=("c",), files=("c.txt",)))
RECORDS = [Record("1", {"text": "one"}, "pos"), Record("2", {"text": "two"}, "neg")]


def _run(folder, values, records=RECORDS, *, added=None, log=None):
    """Start a record, make every step that is not done, return the record and the steps made."""
    steps = StepRecord(folder, STEPS, added=added, log=log, label="test")
    steps.start(values, records=records)
    made = []
    if not steps.done("a", "a.txt"):
        steps.path("a.txt").write_text("a")
        steps.save("a", {"x": values.get("x")})
        made.append("a")
    if not (steps.done("b1", "b") and steps.done("b2", "b")):
        steps.path("b").mkdir(exist_ok=True)
        (steps.path("b") / "model").write_text("b")
        steps.save("b1", 1)
        steps.save("b2", 2)
        made.append("b")
    if not steps.done("c", "c.txt"):
        steps.path("c.txt").write_text("c")
        steps.save("c", 3)
        made.append("c")
    return steps, made


def test_a_rerun_skips_done_steps_and_a_changed_parameter_redoes_its_step_and_those_after(tmp_path):
    values = {"x": 1, "y": 2, "z": 3}
    steps, made = _run(tmp_path, values)
    assert made == ["a", "b", "c"]
    record = json.loads((tmp_path / RECORD_FILE).read_text())
    assert record == steps.facts
    assert record[MADE_WITH_KEY] == {"a": {DATA_KEY: hash_records(RECORDS), "x": 1},
                                     "b": {DATA_KEY: hash_records(RECORDS), "x": 1, "y": 2},
                                     "c": {DATA_KEY: hash_records(RECORDS), "x": 1, "y": 2, "z": 3}}
    stamp = (tmp_path / RECORD_FILE).stat().st_mtime_ns
    assert _run(tmp_path, values)[1] == []
    assert (tmp_path / RECORD_FILE).stat().st_mtime_ns == stamp  # nothing changed: the record is not rewritten

    logs: list[str] = []
    steps, made = _run(tmp_path, {**values, "y": 5}, log=logs.append)
    assert made == ["b", "c"]
    assert logs == ["test: the model folder's b step was made with other data or parameters; redoing it",
                    "test: the model folder's c step was made with other data or parameters; redoing it"]
    assert _run(tmp_path, {**values, "y": 5, "z": 0})[1] == ["c"]
    assert _run(tmp_path, {**values, "y": 5, "z": 0}, records=RECORDS[:1])[1] == ["a", "b", "c"]


def test_start_forgets_stale_steps_facts_and_files(tmp_path):
    _run(tmp_path, {"x": 1, "y": 2, "z": 3})
    steps = StepRecord(tmp_path, STEPS)
    assert steps.start({"x": 1, "y": 9, "z": 3}, records=RECORDS) == ["b", "c"]
    assert "a" in steps.facts and not {"b1", "b2", "c"} & set(steps.facts)
    assert (tmp_path / "a.txt").exists() and not (tmp_path / "b").exists() and not (tmp_path / "c.txt").exists()
    again = StepRecord(tmp_path, STEPS)
    assert again.start({"x": 1, "y": 9, "z": 3}, records=RECORDS) == []  # recorded as they are to be made now ...
    assert again.done("a", "a.txt") and not again.done("b1", "b") and not again.done("c")  # ... not made yet
    assert StepRecord(tmp_path / "new", STEPS).start({}) == ["a", "b", "c"]


def test_a_step_whose_files_are_gone_is_not_done(tmp_path):
    values = {"x": 1, "y": 2, "z": 3}
    _run(tmp_path, values)
    (tmp_path / "c.txt").unlink()
    assert _run(tmp_path, values)[1] == ["c"]


def test_a_parameter_added_later_counts_as_its_old_value(tmp_path):
    values = {"x": 1, "y": 2, "z": 3}
    _run(tmp_path, values)
    record = json.loads((tmp_path / RECORD_FILE).read_text())
    for made in record[MADE_WITH_KEY].values():
        made.pop("z", None)  # as recorded before ``z`` was a parameter of step c
    (tmp_path / RECORD_FILE).write_text(json.dumps(record))
    assert _run(tmp_path, values, added={"z": 3})[1] == []
    assert json.loads((tmp_path / RECORD_FILE).read_text())[MADE_WITH_KEY]["c"]["z"] == 3
    assert _run(tmp_path, {**values, "z": 4}, added={"z": 3})[1] == ["c"]


def test_inputs_beside_the_records(tmp_path):
    steps = StepRecord(tmp_path, STEPS)
    made = steps.made_with({"x": 1}, inputs={"dev_sha256": "sha256:d"})
    assert made["a"] == {"dev_sha256": "sha256:d", "x": 1} and made["c"] == {"dev_sha256": "sha256:d", "x": 1,
                                                                            "y": None, "z": None}


def test_step_context_is_a_subfolder(tmp_path):
    ctx = FitContext(seed=3, progress=False, artifact_dir=tmp_path)
    sub = step_context(ctx, "ckpt")
    assert sub.artifact_dir == tmp_path / "ckpt" and sub.artifact_dir.is_dir() and sub.seed == 3
