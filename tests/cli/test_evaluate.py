import json

import pytest

from cfaug.cli import main


@pytest.fixture
def output_file(tmp_path):
    rows = [("the film was good .", "the film was bad .", "Positive", "Negative"),
            ("the plot was boring .", "the plot was fun .", "Negative", "Positive"),
            ("i liked the acting", "i hated the acting", "Positive", "Negative")]
    f = tmp_path / "out.jsonl"
    f.write_text("".join(json.dumps({"Text": n, "Sentiment": t, "source_id": str(i), "original_Text": o,
                                     "original_Sentiment": s, "method": "auto-cad.v1", "meta": {"passed": True}}) + "\n"
                         for i, (o, n, s, t) in enumerate(rows)), encoding="utf-8")
    judge = tmp_path / "judge.csv"
    judge.write_text("sentence,label\na good film,1\nfun and great,1\ni liked it,1\na bad film,0\nboring,0\n"
                     "i hated it,0\n", encoding="utf-8")
    return f, judge


def test_evaluate_writes_metrics_json(output_file, capsys):
    f, judge = output_file
    assert main(["evaluate", str(f), "--judge-train", str(judge), "--no-embedding", "--no-bertscore"]) == 0
    printed = json.loads(capsys.readouterr().out)
    out = f.with_name("out.jsonl.metrics.json")
    assert printed["metrics"] == [str(out)] and printed["pairs_scored"] == 3
    res = json.loads(out.read_text(encoding="utf-8"))
    by = {m["name"]: m for m in res["groups"]["auto-cad.v1"]["metrics"]}
    assert by["flip_rate"]["value"] == pytest.approx(1.0)
    assert by["flip_rate"]["settings"]["judge_source"] == "trained by cfaug"


def test_evaluate_also_writes_into_the_run_dir(output_file, tmp_path, capsys):
    f, _ = output_file
    run = tmp_path / "out.jsonl.run"
    run.mkdir()
    assert main(["evaluate", str(f), "--no-embedding", "--no-bertscore"]) == 0
    assert (run / "metrics.json").exists() and f.with_name("out.jsonl.metrics.json").exists()
    (run / "metrics.json").unlink()
    # -o with an explicit --run-dir: both
    assert main(["evaluate", str(f), "--no-embedding", "--no-bertscore", "-o", str(tmp_path / "m.json"),
                 "--run-dir", str(run)]) == 0
    assert (run / "metrics.json").exists() and (tmp_path / "m.json").exists()


def _run_dir(path):
    """A minimal run directory as 'cfaug augment' writes it, with one counterfactual."""
    path.mkdir()
    (path / "config.json").write_text(json.dumps({
        "task": {"name": "sentiment", "target": "opposite", "edit_roles": ["text"]},
        "schema": {"text_cols": {"text": "text"}, "label_col": "label", "id_col": None}}), encoding="utf-8")
    row = {"text": "a bad film", "label": "negative", "source_id": "1", "original_text": "a good film",
           "original_label": "positive", "method": "auto-cad.v1", "meta": {"passed": True}}
    (path / "results.jsonl").write_text(json.dumps({"key": "1", "counterfactuals": [row]}) + "\n", encoding="utf-8")
    return path


def test_output_option_leaves_the_runs_metrics_json_alone(output_file, tmp_path, capsys):
    f, _ = output_file
    beside = tmp_path / "out.jsonl.run"  # the run directory 'cfaug augment -o out.jsonl' writes
    beside.mkdir()
    (beside / "metrics.json").write_text("kept", encoding="utf-8")
    assert main(["evaluate", str(f), "--no-embedding", "--no-bertscore", "-o", str(tmp_path / "other.json")]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == [str(tmp_path / "other.json")]
    assert (beside / "metrics.json").read_text(encoding="utf-8") == "kept"

    run = _run_dir(tmp_path / "run")  # a run directory as the input
    (run / "metrics.json").write_text("kept", encoding="utf-8")
    assert main(["evaluate", str(run), "--no-embedding", "--no-bertscore", "-o", str(tmp_path / "o2.json")]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == [str(tmp_path / "o2.json")]
    assert (run / "metrics.json").read_text(encoding="utf-8") == "kept"
    assert json.loads((tmp_path / "o2.json").read_text(encoding="utf-8"))["pairs_scored"] == 1


def test_progress_on_stderr_unless_no_progress(output_file, capsys):
    f, judge = output_file
    args = ["evaluate", str(f), "--judge-train", str(judge), "--no-embedding", "--no-bertscore"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "flip-rate judge: 100%" in err and "3/3 [" in err and "cf/s]" in err  # a tqdm bar
    assert main([*args, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "3/3 [" not in err and "cf/s" not in err
    assert "flip_rate" in err  # the table is still printed


def test_without_a_judge_stderr_and_json_say_how_to_add_one(output_file, capsys):
    f, _ = output_file
    assert main(["evaluate", str(f), "--no-embedding", "--no-bertscore", "--no-progress"]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("flip rate:"))
    assert "no judge" in line and "--judge-train DATA" in line and "--judge DIR" in line
    res = json.loads(f.with_name("out.jsonl.metrics.json").read_text(encoding="utf-8"))
    assert line in res["notes"]


def test_evaluate_errors_are_clear(output_file, tmp_path, capsys):
    f, judge = output_file
    assert main(["evaluate", str(f), "--judge", "x", "--judge-train", str(judge)]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["evaluate", str(f), "--judge", "some-org/some-model", "--no-embedding"]) == 2
    assert "does not download" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_evaluate_a_style_transfer_output(tmp_path, capsys):
    """--task style: targets are style names (default informal, formal; --levels names others)."""
    rows = [("could you please send the report", "send the report pls", "formal", "informal"),
            ("gonna grab food, u coming?", "I am going to get lunch; would you like to join me?", "informal", "formal"),
            ("thanks a lot, mate", "Thank you very much.", "informal", "formal")]
    f = tmp_path / "style.jsonl"
    f.write_text("".join(json.dumps({"text": n, "label": t, "original_text": o, "original_label": s,
                                     "method": "zero-shot.v1", "meta": {"passed": True}}) + "\n"
                         for o, n, s, t in rows), encoding="utf-8")
    judge = tmp_path / "judge.csv"
    judge.write_text("text,label\nsend it pls,informal\nu coming?,informal\nthanks mate,informal\n"
                     "Please send the report.,formal\nWould you like to join me?,formal\nThank you very much.,formal\n",
                     encoding="utf-8")
    assert main(["evaluate", str(f), "--task", "style", "--judge-train", str(judge), "--no-embedding",
                 "--no-bertscore"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs_scored"] == 3
    res = json.loads(f.with_name("style.jsonl.metrics.json").read_text(encoding="utf-8"))
    assert res["task"] == "style"
    by = {m["name"]: m for m in res["groups"]["zero-shot.v1"]["metrics"]}
    assert by["flip_rate"]["n"] == 3

    # other style names
    g = tmp_path / "tone.jsonl"
    g.write_text(f.read_text(encoding="utf-8").replace('"formal"', '"polite"').replace('"informal"', '"casual"'),
                 encoding="utf-8")
    assert main(["evaluate", str(g), "--task", "style", "--levels", "casual,polite", "--no-embedding",
                 "--no-bertscore"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs_scored"] == 3
