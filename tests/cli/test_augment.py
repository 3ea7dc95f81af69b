"""``cfaug augment`` end to end. Most runs use the tiny masked LM (``--mlm``) with the similarity filter
off, so no sentence encoder is loaded; one run uses the default recipe with the packaged encoder."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pandas as pd
import pytest

from cfaug.cli import main
from cfaug.methods.auto_cad import AutoCADConfig
from cfaug.nlp.tokens import levenshtein, tokenize

CONTRACT = ["Text", "Sentiment", "source_id", "original_Text", "original_Sentiment", "method", "meta"]


@pytest.fixture
def reviews(tmp_path, sentiment_tsv):
    """The sentiment fixture copied to a scratch folder (outputs land next to their input)."""
    f = tmp_path / "reviews.tsv"
    f.write_bytes(sentiment_tsv.read_bytes())
    return f


@pytest.fixture(scope="module")
def fast(tiny_mlm_dir):
    """In this process (--workers 1): the method is loaded once for the whole module, where each run's pool of
    worker processes would load it again (the engines have their own tests, tests/run/engines)."""
    return ["--mlm", str(tiny_mlm_dir), "-p", "min_similarity=0", "--no-progress", "--workers", "1"]


def augment(*args):
    return main(["augment", *map(str, args)])


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def fixture_rows(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


# --------------------------------------------------------------------------------------- default recipe


@pytest.fixture(scope="module")
def default_run(tmp_path_factory, sentiment_tsv):
    """One run of the default recipe, with the default output name next to the input."""
    d = tmp_path_factory.mktemp("default")
    f = d / "reviews.tsv"
    f.write_bytes(sentiment_tsv.read_bytes())
    import io
    from contextlib import redirect_stderr, redirect_stdout

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["augment", str(f), "-p", "min_similarity=0.5", "--no-progress"])
    return d, code, out.getvalue(), err.getvalue()


def test_default_output_name_and_contract(default_run, sentiment_tsv):
    d, code, out, err = default_run
    assert code == 0, err
    output = d / "reviews.counterfactuals.jsonl"
    printed = json.loads(out)
    assert printed == {"output": str(output), "counterfactuals": printed["counterfactuals"], "rejected": 0,
                       "failed": 0, "run_dir": str(output) + ".run"}
    rows = read_jsonl(output)
    assert len(rows) == printed["counterfactuals"] >= 20
    src = {r["id"]: r for r in fixture_rows(sentiment_tsv)}
    for row in rows:
        assert list(row) == CONTRACT
        orig = src[row["source_id"]]
        assert row["original_Text"] == orig["Text"] and row["original_Sentiment"] == orig["Sentiment"]
        assert row["Sentiment"] == {"Positive": "Negative", "Negative": "Positive"}[orig["Sentiment"]]
        assert row["Text"] != orig["Text"] and row["method"] == "auto-cad.v1"
        meta = row["meta"]
        # precision first: a row is written only when C gives it the target and no opinion of the source is left
        assert meta["passed"] is True and meta["edits"] and meta["filters"]["flip"] and meta["filters"]["complete"]
        assert meta["confidence"] == meta["own_judge"]["target_prob"] >= AutoCADConfig().flip_min_prob
        assert meta["own_judge"]["flipped"] is True and meta["choice"]["rank"] == 1
        assert meta["variant"] in ("rm-ct", "rep-ct") and 0 < meta["edit_rate"]
        # the edit-rate filter: at most max_edit_rate (max_edit_rate_short for a text of at most 20 tokens), or at
        # most min_edits token edits (a short review)
        short = len(tokenize(row["original_Text"])) <= 20
        assert meta["edit_rate"] <= (AutoCADConfig.max_edit_rate_short if short else AutoCADConfig.max_edit_rate) \
            or levenshtein(tokenize(row["original_Text"]), tokenize(row["Text"])) <= AutoCADConfig.min_edits
        assert meta["similarity"] >= 0.5 and meta["causal_terms"]


def test_run_directory_contents(default_run):
    d, _, _, err = default_run
    run = d / "reviews.counterfactuals.jsonl.run"
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "manifest.json", "rejects.jsonl", "results.jsonl",
                                                     "summary.json"]
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["method"] == "auto-cad.v1" and cfg["params"]["min_similarity"] == 0.5 and cfg["seed"] == 0
    man = json.loads((run / "manifest.json").read_text())
    assert man["input_hash"] == cfg["input_hash"] and man["versions"]["torch"] and man["seed"] == 0
    training = man["method_facts"]["training"]  # the training stage: where C and the rest were fitted
    assert cfg["params"]["classifier"] == "tfidf" and training["fit_facts"]["classifier_folds"] == 5
    assert training["train_rows"] == 40 and training["fingerprint"] and Path(training["artifacts"]).name == training["fingerprint"]
    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

    assert TfidfLinearJudge.load(Path(training["artifacts"]) / "classifier-fold0.pkl").describe()["judge"] == "tfidf-logreg"
    results = read_jsonl(run / "results.jsonl")
    assert len(results) == 40 and len({r["key"] for r in results}) == 40
    summary = json.loads((run / "summary.json").read_text())
    assert summary["rows_read"] == 40 and summary["items"] == 40 and summary["rows_rejected"] == 0
    assert "rows read              40" in err and "work items             40" in err


# ---------------------------------------------------------------------------------------------- formats


@pytest.fixture(scope="module")
def base_run(tmp_path_factory, sentiment_tsv, fast):
    d = tmp_path_factory.mktemp("base")
    assert augment(sentiment_tsv, "-o", d / "out.jsonl", "--run-dir", d / "run", *fast) == 0
    return d


def texts(rows):
    return [(r["source_id"], r["Text"], r["Sentiment"]) for r in rows]


@pytest.mark.parametrize("name,flag,read", [
    ("out.csv", [], lambda p: list(csv.DictReader(open(p, encoding="utf-8", newline="")))),
    ("out.parquet", [], lambda p: pd.read_parquet(p).to_dict(orient="records")),
    ("out_hf", ["--output-format", "hf"], lambda p: datasets.load_from_disk(str(p)).to_list()),
    ("out.data", ["--output-format", "tsv"], lambda p: list(csv.DictReader(open(p, encoding="utf-8", newline=""), delimiter="\t"))),
])
def test_output_formats_hold_the_same_columns(base_run, sentiment_tsv, fast, name, flag, read):
    # same run directory: the finished items are reused and only written again in another format
    assert augment(sentiment_tsv, "-o", base_run / name, "--run-dir", base_run / "run", *flag, *fast) == 0
    rows = read(base_run / name)
    want = read_jsonl(base_run / "out.jsonl")
    assert [list(r) for r in rows] == [CONTRACT] * len(want)
    assert texts(rows) == texts(want)
    assert [json.loads(r["meta"]) for r in rows] == [r["meta"] for r in want]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "hf"])
def test_input_formats_give_the_same_counterfactuals(base_run, sentiment_tsv, fast, tmp_path, fmt):
    df = pd.DataFrame(fixture_rows(sentiment_tsv))
    path = tmp_path / f"in.{fmt}" if fmt != "hf" else tmp_path / "in_hf"
    {"csv": lambda: df.to_csv(path, index=False),
     "jsonl": lambda: df.to_json(path, orient="records", lines=True),
     "parquet": lambda: df.to_parquet(path, index=False),
     "hf": lambda: datasets.Dataset.from_pandas(df).save_to_disk(str(path))}[fmt]()
    assert augment(path, "-o", tmp_path / "out.jsonl", *fast) == 0
    assert texts(read_jsonl(tmp_path / "out.jsonl")) == texts(read_jsonl(base_run / "out.jsonl"))


def test_format_flag_for_an_unusual_name(tmp_path, sentiment_tsv, fast):
    f = tmp_path / "reviews.txt"
    f.write_bytes(sentiment_tsv.read_bytes())
    assert augment(f, "--format", "tsv", "-o", tmp_path / "o.jsonl", *fast) == 0
    assert (tmp_path / "o.jsonl").stat().st_size > 0


def test_column_mapping_flags_and_extra_columns(tmp_path, sentiment_tsv, fast):
    f = tmp_path / "custom.csv"
    with open(f, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["key", "body", "y", "source"])
        for r in fixture_rows(sentiment_tsv):
            w.writerow([r["id"], r["Text"], {"Positive": "pos", "Negative": "neg"}[r["Sentiment"]], "fixture"])
    out = tmp_path / "o.jsonl"
    assert augment(f, "--text-col", "body", "--label-col", "y", "--id-col", "key", "-o", out, *fast) == 0
    rows = read_jsonl(out)
    assert rows and list(rows[0]) == ["body", "y", "source_id", "original_body", "original_y", "method", "source",
                                      "meta"]
    assert {r["y"] for r in rows} <= {"pos", "neg"} and {r["source"] for r in rows} == {"fixture"}
    assert all(r["source_id"].startswith("r") for r in rows)


def test_config_file_with_flags_overriding_it(tmp_path, sentiment_tsv, tiny_mlm_dir):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"mlm: {tiny_mlm_dir}\nparams:\n  min_similarity: 0\n  variants: rm\nseed: 5\nlimit: 6\n")
    out = tmp_path / "o.jsonl"
    assert augment(sentiment_tsv, "--config", cfg, "--limit", "12", "-o", out, "--no-progress") == 0
    run_cfg = json.loads((tmp_path / "o.jsonl.run" / "config.json").read_text())
    assert run_cfg["seed"] == 5 and run_cfg["limit"] == 12 and run_cfg["params"]["variants"] == "rm"
    assert run_cfg["params"]["mlm"] == str(tiny_mlm_dir)
    assert {r["meta"]["variant"] for r in read_jsonl(out)} <= {"rm-ct"}


def test_a_preset_from_a_config_file_and_its_missing_model(tmp_path, sentiment_tsv, tiny_mlm_dir, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("preset: paper\nlimit: 4\n")
    assert augment(sentiment_tsv, "--config", cfg, "-o", tmp_path / "a.jsonl", "--no-progress") == 2
    assert "preset paper of auto-cad.v1 needs mlm: a masked LM by local path" in capsys.readouterr().err
    out = tmp_path / "b.jsonl"
    assert augment(sentiment_tsv, "--config", cfg, "--mlm", tiny_mlm_dir, "-p", "min_moverscore=0", "-o", out,
                   "--no-progress") == 0
    manifest = json.loads((tmp_path / "b.jsonl.run" / "manifest.json").read_text())
    params = json.loads((tmp_path / "b.jsonl.run" / "config.json").read_text())["params"]
    assert manifest["options"]["preset"] == "paper"
    assert params["rep_selection"] == "eq1" and params["min_moverscore"] == 0.0  # the flag beats the preset
    assert {r["meta"]["variant"] for r in read_jsonl(out)} <= {"rm-ct", "rep-ct", "syn"}


def test_seed_makes_output_deterministic(tmp_path, sentiment_tsv, fast):
    for name in ("a", "b"):
        assert augment(sentiment_tsv, "--seed", "11", "-o", tmp_path / f"{name}.jsonl", *fast) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    res = lambda n: [json.loads(x) for x in (tmp_path / f"{n}.jsonl.run" / "results.jsonl").read_text().splitlines()]  # noqa: E731
    assert sorted(res("a"), key=lambda r: r["key"]) == sorted(res("b"), key=lambda r: r["key"])


def test_limit_and_keep_failed(tmp_path, sentiment_tsv, fast, tiny_classifier_dir):
    # C is the tiny random classifier: it rarely flips, so there are failures to keep. (The TF-IDF classifier
    # is now trained on all 40 rows, --limit does not limit training data, and flips every one of the 10.)
    out = tmp_path / "o.jsonl"
    # completeness=false: the flip filter is the one reason a candidate fails
    assert augment(sentiment_tsv, "--limit", "10", "--keep-failed", "--classifier", tiny_classifier_dir,
                   "-p", "require_flip=true", "-p", "completeness=false", "-o", out, *fast) == 0
    rows = read_jsonl(out)
    taken = json.loads((tmp_path / "o.jsonl.run" / "rows_taken.json").read_text())["ids"]
    assert len(taken) == 10 and {r["source_id"] for r in rows} <= set(taken)
    failed = [r for r in rows if r["meta"]["passed"] is False]
    assert failed  # failures kept
    assert all(r["meta"]["filters"]["flip"] is False for r in failed)
    summary = json.loads((tmp_path / "o.jsonl.run" / "summary.json").read_text())
    assert summary["items"] == 10 and summary["counterfactuals_written"] == len(rows)
    assert summary["candidates_filtered_out"] == len(failed)
    manifest = json.loads((tmp_path / "o.jsonl.run" / "manifest.json").read_text())
    assert manifest["method_facts"]["training"]["train_rows"] == 40  # --limit does not limit training data


def test_rating_task_to_a_chosen_target(tmp_path, sentiment_tsv, fast):
    f = tmp_path / "stars.jsonl"
    stars = {"Positive": ["5", "4"], "Negative": ["1", "2"]}
    with open(f, "w", encoding="utf-8") as fh:
        for i, r in enumerate(fixture_rows(sentiment_tsv)):
            fh.write(json.dumps({"review": r["Text"], "stars": int(stars[r["Sentiment"]][i // 2 % 2])}) + "\n")
    out = tmp_path / "o.jsonl"
    assert augment(f, "--task", "rating", "--target", "1", "--keep-failed", "-o", out, *fast) == 0
    rows = read_jsonl(out)
    assert rows and {r["stars"] for r in rows} == {"1"} and "1" not in {r["original_stars"] for r in rows}
    assert augment(f, "--task", "rating", "--keep-failed", "-o", tmp_path / "opp.jsonl", *fast) == 0
    mirror = {"5": "1", "4": "2", "2": "4", "1": "5"}
    assert all(r["stars"] == mirror[r["original_stars"]] for r in read_jsonl(tmp_path / "opp.jsonl"))


@pytest.mark.parametrize("target", ["positive", "pos", "1", "POSITIVE"])
def test_a_target_is_written_in_the_inputs_spelling(reviews, tmp_path, fast, target):
    out = tmp_path / "o.jsonl"
    assert augment(reviews, "--target", target, "--keep-failed", "-o", out, *fast) == 0
    rows = read_jsonl(out)
    assert rows and {r["Sentiment"] for r in rows} == {"Positive"}
    assert {r["original_Sentiment"] for r in rows} == {"Negative"}


def test_a_target_that_is_no_label_of_the_input_exits_2_naming_its_labels(reviews, tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    assert augment(reviews, "--target", "neutral", "-o", out, "--no-progress") == 2
    assert capsys.readouterr().err == (
        f"cfaug: error: target 'neutral' is not a label of {reviews}; its labels are Negative, Positive\n")
    assert not out.exists() and not (tmp_path / "o.jsonl.run").exists()


# ------------------------------------------------------------------------------------------ bad input


def test_bad_rows_are_skipped_counted_and_written_to_rejects(tmp_path, sentiment_tsv, fast, capsys):
    f = tmp_path / "messy.csv"
    rows = fixture_rows(sentiment_tsv)
    with open(f, "wb") as fh:
        fh.write(b"id,Text,Sentiment\n")
        for r in rows:
            fh.write(f'{r["id"]},"{r["Text"]}",{r["Sentiment"]}\n'.encode())
        fh.write(b'x1,"",Positive\n')                                   # row 41: empty text
        fh.write(b'x2,"A fine film.",\n')                                # row 42: missing label
        fh.write(b'x3,"An odd film.",Mixed\n')                           # row 43: unknown label
        fh.write(b'x4,"Caf\xe9 scenes.",Negative\n')                     # row 44: not UTF-8
        fh.write(b'r01,"Same id.",Positive\n')                           # row 45: duplicate id
        fh.write(b'x6,"' + b"long " * 210_000 + b'",Negative\n')         # row 46: a 1 MB text
        fh.write(b'x7,"Two lines,\nboth great and wonderful.",Positive\n')  # row 47: quoted newline (kept)
    capsys.readouterr()
    # C reads the 41 usable rows alone (no shipped background): what is checked here is the reading, and the
    # rows read differ from every other run's, so C is trained again
    assert augment(f, "-o", tmp_path / "o.jsonl", *fast, "-p", "classifier_background=none") == 0
    err = capsys.readouterr().err
    rejects = read_jsonl(tmp_path / "o.jsonl.run" / "rejects.jsonl")
    assert {r["row"]: r["problem"] for r in rejects} == {
        41: "empty text in column 'Text'", 42: "missing label in column 'Sentiment'",
        43: "unknown label 'Mixed'; expected one of negative, positive in column 'Sentiment'",
        44: "undecodable bytes (not UTF-8) in column 'Text'", 45: "duplicate id 'r01' (first seen in row 1)",
        46: "text in column 'Text' has 1,050,000 characters, over the limit of 100,000 (--max-chars)"}
    assert all(r["source"] == str(f) for r in rejects)
    assert f"rejected: {f}, row 41: empty text in column 'Text'" in err
    assert "rows rejected          6" in err and "rows read              47" in err
    summary = json.loads((tmp_path / "o.jsonl.run" / "summary.json").read_text())
    assert summary["rows_rejected"] == 6 and summary["items"] == 41
    results = read_jsonl(tmp_path / "o.jsonl.run" / "results.jsonl")
    assert "x7" in {r["source_id"] for r in results}


@pytest.mark.parametrize("name,content,message", [
    ("empty.tsv", b"", "the file is empty"),
    ("header.tsv", b"id\tSentiment\tText\n", "no data rows"),
    ("nolabel.tsv", b"id\tText\nr1\tA great film.\n", "no label column: no column is named like a label"),
    ("alljunk.tsv", b"Sentiment\tText\nmixed\tA film.\n\tAnother.\n", "no usable rows; all 2 were rejected"),
])
def test_whole_file_problems_exit_2_naming_the_file(tmp_path, capsys, name, content, message):
    f = tmp_path / name
    f.write_bytes(content)
    assert augment(f, "--no-progress") == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"cfaug: error: {f}: ") and message in err


#: a megabyte of one word, no spaces, no separators: one cell, one column name or one label
MEGABYTE = "x" * 1_000_000


@pytest.mark.parametrize("name,content,message", [
    ("oneline.csv", MEGABYTE + "\n", "no column for the 'text' field"),  # the whole file is a header
    ("wide.csv", ",".join(f"column{i}" for i in range(100_000)) + "\n1,2\n", "… and 99,"),
    ("label.jsonl", json.dumps({"text": "A fine film.", "label": MEGABYTE}) + "\n", "unknown label 'xxxx"),
    ("mapped.tsv", f"Text\tSentiment\nA fine film.\t{MEGABYTE}\n", "is not in --label-map"),
])
def test_a_megabyte_of_one_line_gives_a_short_error(tmp_path, capsys, name, content, message):
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    args = ["--label-map", "1=positive,0=negative"] if name == "mapped.tsv" else []
    assert augment(f, "-o", tmp_path / "o.jsonl", "--no-progress", *args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err) < 2000, err[:3000]
    assert "(1,000,000 characters)" in err or "more" in err  # says how much was left out


def test_star_counts_without_label_col_exit_2_naming_the_flag(tmp_path, capsys):
    f = tmp_path / "stars.csv"
    f.write_text("text,stars\nawful service and cold food,1\ngreat pizza and a friendly waiter,5\n")
    assert augment(f, "-o", tmp_path / "o.jsonl", "--no-progress") == 2
    err = capsys.readouterr().err
    assert "--label-col" in err and "'stars': 1, 5" in err and not (tmp_path / "o.jsonl").exists()


def test_the_summary_names_the_columns_used(sentiment_tsv, tmp_path, capsys):
    assert augment(sentiment_tsv, "-o", tmp_path / "o.jsonl", "--limit", "2", "--no-progress",
                   "-p", "classifier_background=none") == 0
    assert "columns used           text=Text, label=Sentiment (found by its name), id=id" in capsys.readouterr().err


def test_missing_column_flag(sentiment_tsv, tmp_path, capsys):
    assert augment(sentiment_tsv, "--text-col", "body", "-o", tmp_path / "o.jsonl") == 2
    assert capsys.readouterr().err.strip() == (
        f"cfaug: error: {sentiment_tsv}: missing column(s) body (columns: id, Sentiment, Text)")


@pytest.mark.parametrize("args,message", [
    (["--method", "auto-kad"], "unknown method 'auto-kad'"),
    (["-p", "colour=red"], "unknown parameter(s) of auto-cad.v1: colour; valid: "),
    (["-p", "folds=many"], "parameter folds of auto-cad.v1: cannot read 'many' as int"),
    (["-p", "novalue"], "--param expects KEY=VALUE"),
    (["--target", "neutral"], "target 'neutral' is not a label of "),
    (["--config", "missing.yaml"], "config file missing.yaml: file not found"),
])
def test_bad_options_exit_2(sentiment_tsv, tmp_path, capsys, args, message):
    assert augment(sentiment_tsv, "-o", tmp_path / "o.jsonl", "--no-progress", *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("cfaug: error: ") and message in err


def test_auto_cad_does_not_do_nli(nli_tsv, tmp_path, capsys):
    assert augment(nli_tsv, "--task", "nli", "-o", tmp_path / "o.jsonl", "--no-progress") == 2
    assert capsys.readouterr().err == "cfaug: error: method auto-cad.v1 supports tasks sentiment, rating, not 'nli'\n"


def test_a_different_config_in_the_same_run_dir_is_refused_until_overwrite(base_run, sentiment_tsv, fast, capsys):
    run = base_run / "run"
    before = (run / "results.jsonl").read_bytes()
    assert augment(sentiment_tsv, "-o", base_run / "x.jsonl", "--run-dir", run, *fast, "--seed", "9") == 2
    err = capsys.readouterr().err
    assert f"cfaug: error: {run} holds a run with a different configuration (differs in: seed)" in err
    assert "--overwrite" in err and (run / "results.jsonl").read_bytes() == before
    other = base_run / "run-copy"
    import shutil

    shutil.copytree(run, other)
    assert augment(sentiment_tsv, "-o", base_run / "x.jsonl", "--run-dir", other, *fast, "--seed", "9", "--overwrite") == 0
    assert json.loads((other / "config.json").read_text())["seed"] == 9
    assert len(read_jsonl(other / "results.jsonl")) == 40


# ------------------------------------------------------------------------------------ as a user runs it


def run_cli(*args, env_extra=None, cwd=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "cfaug", "augment", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_whole_file_errors_print_one_line_without_traceback(tmp_path):
    f = tmp_path / "empty.csv"
    f.write_bytes(b"")
    res = run_cli(f)
    assert res.returncode == 2
    assert res.stderr == f"cfaug: error: {f}: the file is empty; expected a header row and data rows\n"


@pytest.mark.parametrize("flag,name,what", [("--classifier", "bert-base-uncased", "classifier"),
                                            ("--mlm", "distilroberta-base", "masked language model")])
def test_hub_model_names_are_refused_and_nothing_is_fetched(tmp_path, sentiment_tsv, flag, name, what):
    hf_home = tmp_path / "hf-home"
    res = run_cli(sentiment_tsv, "-o", tmp_path / "o.jsonl", flag, name, "-p", "min_similarity=0", "--no-progress",
                  env_extra={"HF_HOME": str(hf_home), "HF_HUB_CACHE": str(hf_home / "hub")}, cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.splitlines()[-1].startswith(f"cfaug: error: {what} '{name}' is not a local folder.")
    assert "does not download models" in res.stderr and "pass the local folder" in res.stderr
    assert not hf_home.exists() or not any(p.is_file() for p in hf_home.rglob("*"))


def test_the_exit_codes_are_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["augment", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit codes: 0 success" in text and "2 " in text and "3 stopped early" in text and "130 interrupted" in text
    assert "4 finished but some items failed" in text and "5 finished, items failed and no counterfactual" in text


@pytest.mark.parametrize("complete, failed, written, code", [
    (True, 0, 10, 0), (True, 0, 0, 0),     # nothing failed: success, even when no item had anything to rewrite
    (True, 3, 7, 4), (True, 3, 0, 5),      # failed items, with and without output
    (False, 3, 0, 3), (False, 0, 5, 3),    # stopped early wins: a rerun resumes
])
def test_exit_code_of_a_finished_run(complete, failed, written, code):
    from cfaug.cli.augment import exit_code
    from cfaug.run.runner import RunSummary

    assert exit_code(RunSummary(items=10, complete=complete, items_failed=failed,
                                counterfactuals_written=written)) == code
