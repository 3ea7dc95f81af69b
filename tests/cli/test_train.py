"""``cfaug train`` saves a model folder that ``cfaug augment --model`` uses without training."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

from cfaug.cli import main


#: augment runs in this process: the method is loaded once, where a pool of worker processes would load it
#: again in each worker (the engines have their own tests, tests/run/engines)
IN_PROCESS = ("--workers", "1")


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_train_then_augment_with_the_model(tmp_path, sentiment_tsv, monkeypatch):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    model = tmp_path / "model"
    code, out, err = cli("train", "auto-cad", "--train-data", sentiment_tsv, "-o", model, "--no-progress")
    assert code == 0, err
    assert json.loads(out)["train_rows"] == 40 and (model / "artifact.json").exists()

    code, _, err = cli("augment", sentiment_tsv, "-o", tmp_path / "a.jsonl", "--model", model, "--no-progress",
                       *IN_PROCESS)
    assert code == 0, err
    facts = json.loads((tmp_path / "a.jsonl.run" / "manifest.json").read_text())["method_facts"]["training"]
    assert facts["trained_now"] is False and facts["artifacts"] == str(model)
    assert not list((tmp_path / "store").glob("*/artifact.json"))  # nothing was trained into the store
    assert not list(tmp_path.glob("*.partial"))  # the training folder was moved into place

    # the same output as a run that trains on the same data itself
    code, _, err = cli("augment", sentiment_tsv, "-o", tmp_path / "b.jsonl", "--no-progress", *IN_PROCESS)
    assert code == 0, err
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_a_training_parameter_that_disagrees_with_the_model_is_refused(tmp_path, sentiment_tsv, monkeypatch):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    model = tmp_path / "model"
    assert cli("train", "auto-cad", "--train-data", sentiment_tsv, "-o", model, "--no-progress")[0] == 0
    code, _, err = cli("augment", sentiment_tsv, "-o", tmp_path / "a.jsonl", "--model", model, "-p", "folds=3")
    assert code == 2 and "trained with other values of folds" in err
    code, _, err = cli("augment", sentiment_tsv, "-o", tmp_path / "c.jsonl", "--model", tmp_path / "nothing")
    assert code == 2 and "not a trained model folder" in err


def test_a_file_a_training_parameter_names_is_part_of_the_model_identity(tmp_path, sentiment_tsv, monkeypatch):
    """The model store tells a file changed in place from the one a model was trained on."""
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    data = tmp_path / "classifier.tsv"
    data.write_bytes(sentiment_tsv.read_bytes())

    def trained_now(name):
        code, _, err = cli("augment", sentiment_tsv, "-o", tmp_path / name, "--no-progress",
                           "-p", f"classifier_data={data}", *IN_PROCESS)
        assert code == 0, err
        return json.loads((tmp_path / f"{name}.run" / "manifest.json").read_text())["method_facts"]["training"]

    assert trained_now("a.jsonl")["trained_now"] is True
    assert trained_now("b.jsonl")["trained_now"] is False
    lines = data.read_text().splitlines(keepends=True)
    data.write_text("".join(lines[:-3]))  # the same path, other rows
    again = trained_now("c.jsonl")
    assert again["trained_now"] is True
    info = json.loads((tmp_path / "store" / again["fingerprint"] / "artifact.json").read_text())
    assert info["param_files"]["classifier_data"].startswith("sha256:")
