"""CoBA with fine-tuned classifiers given by path (``-p models=DIR1,DIR2``): Hugging Face sequence
classifier folders vote with every default attribution method; their labels come from ``id2label`` or
``-p model_labels=``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.config import ConfigError
from cfaug.data.tasks import make_task
from cfaug.methods import build_method

LIGHT = ["-p", "lime_samples=20", "-p", "shapley_samples=1", "-p", "ig_steps=4", "-p", "vote_cache=none"]


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def folders(tmp_path_factory, make_tiny_bert):
    """Two tiny random sequence classifiers: outputs named LABEL_0 / LABEL_1, and negative / positive."""
    root = tmp_path_factory.mktemp("coba-models")
    generic = make_tiny_bert(root / "generic", "classifier", id2label={0: "LABEL_0", 1: "LABEL_1"}, seed=1)
    named = make_tiny_bert(root / "named", "classifier", seed=2)
    return generic, named


@pytest.fixture
def five_rows(tmp_path, sentiment_tsv):
    path = tmp_path / "five.tsv"
    path.write_text("\n".join(sentiment_tsv.read_text(encoding="utf-8").splitlines()[:6]) + "\n", encoding="utf-8")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_offline_run_with_two_hugging_face_classifiers_by_path(tmp_path, five_rows, folders, capsys):
    generic, named = folders
    out = tmp_path / "out.jsonl"
    code = main(["augment", str(five_rows), "-o", str(out), "--method", "coba", "--no-progress", "--workers", "1",
                 "-p", f"models={generic},{named}", "-p", "model_labels=negative,positive", *LIGHT])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    rows = read_jsonl(out)
    assert rows
    voters = {f"{m}/{meth}" for m in (generic, named) for meth in ("lime", "integrated-gradients", "shapley")}
    for r in rows:
        assert set(r["meta"]["ensemble"]["top"]) == voters
        assert r["Sentiment"] != r["original_Sentiment"]


def test_unnamed_labels_without_model_labels_stop_the_run_before_any_work(tmp_path, five_rows, folders, capsys):
    generic, named = folders
    out = tmp_path / "out.jsonl"
    assert main(["augment", str(five_rows), "-o", str(out), "--method", "coba", "--no-progress",
                 "-p", f"models={generic},{named}", *LIGHT]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "training" not in err
    assert err.count("-p model_labels=") == 1 and "unnamed labels ['label_0', 'label_1']" in err
    assert not out.exists()


def coba(**params):
    return build_method("coba", {"importance": "lime", **params})


def test_model_labels_shared_or_per_model(folders, tmp_path, make_tiny_bert):
    generic, named = folders
    task = make_task("sentiment")
    # one list: for the folders whose outputs are unnamed; the others keep their own names
    m = coba(models=f"{generic},{named},cnn", model_labels="negative,positive")
    assert m._check_models(task) == {str(generic): ["negative", "positive"], str(named): ["negative", "positive"]}
    # one list per entry of models: an empty entry keeps the model's own names, spellings map
    upper = make_tiny_bert(tmp_path / "upper", "classifier", id2label={0: "POSITIVE", 1: "NEGATIVE"})
    m = coba(models=f"{generic},{upper},cnn", model_labels="pos,neg;;")
    assert m._check_models(task) == {str(generic): ["positive", "negative"], str(upper): ["positive", "negative"]}
    with pytest.raises(ConfigError, match="2 ';'-separated lists for 3 models"):
        coba(models=f"{generic},{upper},cnn", model_labels="pos,neg;")
    with pytest.raises(ConfigError, match="entry 2 is for cnn, a classifier trained here"):
        coba(models=f"{generic},cnn", model_labels="negative,positive;negative,positive")._check_models(task)
    with pytest.raises(ConfigError, match="'joy' is not a label of the task"):
        coba(models=str(generic), model_labels="joy,anger")._check_models(task)


def test_the_loaded_classifiers_read_their_outputs_under_the_given_labels(folders, tmp_path):
    from cfaug.training.context import StageContext

    generic, named = folders
    m = coba(models=f"{generic},{named}", model_labels="positive,negative;")
    task = make_task("sentiment")
    ctx = StageContext(device="cpu")
    assert m.classifiers.load_by_path(0, generic, task, ctx).labels == ("positive", "negative")
    assert m.classifiers.load_by_path(1, named, task, ctx).labels == ("negative", "positive")


@pytest.mark.parametrize("models", ["distilbert-base-uncased-finetuned-sst-2-english", "cnn,org/some-model"])
def test_a_hub_name_is_refused(models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="models load by local path only") as err:
        coba(models=models)._check_models(make_task("sentiment"))
    assert "tfidf-logreg" in str(err.value)  # the registered classifiers, which are trained here


def test_a_hub_name_stops_the_cli_run_before_any_work(tmp_path, five_rows, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["augment", str(five_rows), "-o", str(tmp_path / "o.jsonl"), "--method", "coba", "--no-progress",
                 "-p", "models=cnn,distilbert-base-uncased-finetuned-sst-2-english", *LIGHT]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "training" not in err and "models load by local path only" in err


def test_a_judge_folder_with_unnamed_labels_is_refused(folders):
    generic, named = folders
    task = make_task("sentiment")
    with pytest.raises(ConfigError, match="pass -p judge_labels="):
        coba(models=str(named), judge="hf", judge_model=str(generic))._check_models(task)
    coba(models=str(named), judge="hf", judge_model=str(generic), judge_labels="negative,positive")._check_models(task)


def test_the_vote_cache_scope_follows_the_labels(folders):
    from cfaug.importance.cache import models_scope

    generic, _ = folders
    assert models_scope(generic) == models_scope(generic, labels=None) == models_scope(generic, labels={})
    assert models_scope(generic, labels={"g": ["negative", "positive"]}) != \
        models_scope(generic, labels={"g": ["positive", "negative"]})
