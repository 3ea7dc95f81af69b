"""The Python API mirrors ``cfaug augment``: same options, same rows, a ``datasets.Dataset`` back."""

from __future__ import annotations

import csv
import json

import datasets
import pandas as pd
import pytest

import cfaug
from cfaug.api import run_augment
from cfaug.cli import main
from cfaug.data.io import DataError
from cfaug.config import ConfigError


@pytest.fixture(scope="module")
def rows(sentiment_tsv):
    with open(sentiment_tsv, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.fixture(scope="module")
def params(tiny_mlm_dir):
    return {"mlm": str(tiny_mlm_dir), "min_similarity": 0}


#: runs in this process: the method is loaded once for the module, where a pool of worker processes would
#: load it again for every run (the engines have their own tests, tests/run/engines)
IN_PROCESS = {"workers": 1}


@pytest.fixture(scope="module")
def from_dataset(rows, params, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("api") / "run"
    out = cfaug.augment(datasets.Dataset.from_list(rows), method="auto-cad", params=params, seed=2, run_dir=run_dir,
                        **IN_PROCESS)
    return out, run_dir


def test_augment_returns_a_dataset_with_the_output_contract(from_dataset, rows):
    out, _ = from_dataset
    assert isinstance(out, datasets.Dataset) and out.num_rows > 0
    assert out.column_names == ["Text", "Sentiment", "source_id", "original_Text", "original_Sentiment", "method", "meta"]
    by_id = {r["id"]: r for r in rows}
    for row in out:
        assert row["original_Text"] == by_id[row["source_id"]]["Text"]
        assert row["Sentiment"] != row["original_Sentiment"]
        meta = json.loads(row["meta"])  # a JSON string column
        assert meta["passed"] is True and meta["edits"]


def test_the_api_and_the_cli_give_the_same_rows(from_dataset, sentiment_tsv, tiny_mlm_dir, tmp_path, capsys):
    out, _ = from_dataset
    assert main(["augment", str(sentiment_tsv), "-o", str(tmp_path / "cli.jsonl"), "--mlm", str(tiny_mlm_dir),
                 "-p", "min_similarity=0", "--seed", "2", "--no-progress", "--workers", "1"]) == 0
    cli = [json.loads(x) for x in (tmp_path / "cli.jsonl").read_text(encoding="utf-8").splitlines()]
    api = [{**r, "meta": json.loads(r["meta"])} for r in out]
    assert api == cli


def test_the_run_directory_is_kept_when_named(from_dataset):
    _, run_dir = from_dataset
    assert (run_dir / "results.jsonl").exists() and json.loads((run_dir / "config.json").read_text())["seed"] == 2
    assert json.loads((run_dir / "config.json").read_text())["input"] == "<dataset>"


@pytest.mark.parametrize("kind", ["list", "dataframe", "path"])
def test_other_inputs(rows, params, sentiment_tsv, kind, from_dataset):
    data = {"list": rows, "dataframe": pd.DataFrame(rows), "path": str(sentiment_tsv)}[kind]
    out = cfaug.augment(data, params=params, seed=2, **IN_PROCESS)  # no run_dir: a temporary one, removed afterwards
    assert out.to_list() == from_dataset[0].to_list()


def test_run_augment_options_mirror_the_flags(rows, params, tmp_path):
    summary, out_rows = run_augment(
        [{"key": r["id"], "body": r["Text"], "y": r["Sentiment"][:3].lower()} for r in rows],
        text_col="body", label_col="y", id_col="key", params={**params, "variants": "rep"}, limit=10,
        keep_failed=True, run_dir=tmp_path / "run", output=tmp_path / "o.parquet", progress=False, **IN_PROCESS)
    assert summary.items == 10 and summary.output == str(tmp_path / "o.parquet")
    table = pd.read_parquet(tmp_path / "o.parquet")
    assert list(table.columns)[:3] == ["body", "y", "source_id"] and len(table) == len(out_rows)
    assert len(table) and set(table["y"]) <= {"pos", "neg"}
    assert {json.loads(m)["variant"] for m in table["meta"]} == {"rep-ct"}


def test_errors_are_exceptions(rows, params):
    with pytest.raises(ConfigError, match="supports tasks sentiment, rating, not 'nli'"):
        cfaug.augment([{"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"}],
                      task="nli", params=params)
    with pytest.raises(DataError, match="no usable rows"):
        cfaug.augment([{"text": "A film.", "label": "maybe"}], params=params)


def test_nothing_to_write_still_gives_the_columns(rows, params):
    out = cfaug.augment(rows, params={**params, "max_edit_rate": 0.0, "max_edit_rate_short": 0.0, "min_edits": 0},
                        seed=2, **IN_PROCESS)
    assert out.num_rows == 0
    assert out.column_names[:3] == ["Text", "Sentiment", "source_id"] and "meta" in out.column_names


def test_a_run_that_stopped_early_says_so_in_its_summary(tmp_path, isolated_llm_cache):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = {"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "max_retries": 0}
    summary, rows = run_augment([{"text": "A great film.", "label": "pos"}], "zero-shot", params={"llm": llm},
                                run_dir=tmp_path / "run", progress=False)
    assert rows == [] and summary.complete is False and summary.items_not_done == 1
    assert summary.stop_reason.startswith("LLMUnavailable") and summary.items_failed == 0
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["complete"] is False


def test_the_api_never_writes_over_its_inputs(sentiment_tsv, tmp_path):
    """run_augment, train and compare refuse an output that is one of their inputs, before any work."""
    from cfaug.run.outputs import OutputRefused

    data = tmp_path / "data.tsv"
    data.write_bytes(sentiment_tsv.read_bytes())
    (tmp_path / "link.tsv").symlink_to(data)
    with pytest.raises(OutputRefused, match="is the same file as the input"):
        run_augment(str(data), output=tmp_path / "link.tsv", run_dir=tmp_path / "r")
    with pytest.raises(OutputRefused, match="the input --train-data .*data.tsv is inside that folder"):
        cfaug.api.train("auto-cad", data, tmp_path)
    with pytest.raises(OutputRefused, match="is the same file as the input"):
        cfaug.compare(tmp_path / "sample.jsonl", methods="auto-cad", output=tmp_path, test=str(tmp_path / "summary.json"))
    assert data.read_bytes() == sentiment_tsv.read_bytes() and not (tmp_path / "r").exists()
