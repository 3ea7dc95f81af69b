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
    assert main(["evaluate", str(f), "--no-embedding", "--no-bertscore", "-o", str(tmp_path / "m.json")]) == 0
    assert (run / "metrics.json").exists() and (tmp_path / "m.json").exists()


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
