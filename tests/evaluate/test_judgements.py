"""``cfaug evaluate RUN_DIR`` writes the independent judge's verdict per row to RUN_DIR/judgements.jsonl."""

from __future__ import annotations

import json

import pytest

from cfaug.cli import main
from cfaug.data.io import DataError
from cfaug.evaluate.judgements import JUDGEMENTS_FILE, read_judgements, text_hash
from cfaug.evaluate.pairs import load_pairs

def test_pairs_from_a_run_directory_carry_their_item_id(run_and_judge, tmp_path):
    run, _ = run_and_judge
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    pairs = load_pairs(run).pairs
    assert [p.item_id for p in pairs] == [f"{line['key']}#0" for line in lines]
    assert all("__cfaug_item__" not in p.columns for p in pairs)
    f = tmp_path / "out.jsonl"  # a file has no run-directory ids
    f.write_text(json.dumps({"text": "x", "label": "negative", "original_text": "y", "source_id": "1"}) + "\n",
                 encoding="utf-8")
    assert load_pairs(f).pairs[0].item_id is None


def test_evaluate_run_dir_writes_judgements(run_and_judge, capsys):
    run, judge = run_and_judge
    assert main(["evaluate", str(run), "--judge-train", str(judge), "--no-embedding", "--no-bertscore",
                 "--no-progress"]) == 0
    verdicts = read_judgements(run)
    pairs = {p.item_id: p for p in load_pairs(run).pairs if p.passed}
    assert set(verdicts) == set(pairs)  # the scored rows (a failed candidate is not scored by default)
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    flip = next(m for m in metrics["groups"]["auto-cad.v1"]["metrics"] if m["name"] == "flip_rate")
    assert flip["value"] == pytest.approx(sum(v["flipped"] for v in verdicts.values()) / len(verdicts))
    for item, v in verdicts.items():
        p = pairs[item]
        assert v["judge"] == "tfidf-logreg" and v["target"] == p.target and v["source_id"] == p.source_id
        assert v["predicted"] in ("positive", "negative") and 0.0 <= v["target_prob"] <= 1.0
        assert v["flipped"] == (v["predicted"] == p.target)
        assert (v["target_prob"] > 0.5) == v["flipped"]  # two labels: the argmax is the target iff p > 0.5
        assert v["text_sha1"] == text_hash(p.judge_input)


def test_no_judgements_without_a_judge_or_with_output(run_and_judge, tmp_path, capsys):
    run, judge = run_and_judge
    assert main(["evaluate", str(run), "--no-embedding", "--no-bertscore", "--no-progress"]) == 0
    assert not (run / JUDGEMENTS_FILE).exists()
    # -o: the metrics file is the only file written
    assert main(["evaluate", str(run), "--judge-train", str(judge), "--no-embedding", "--no-bertscore",
                 "--no-progress", "-o", str(tmp_path / "m.json")]) == 0
    assert not (run / JUDGEMENTS_FILE).exists()


def test_read_judgements_names_file_and_line(tmp_path):
    assert read_judgements(tmp_path) == {}
    (tmp_path / JUDGEMENTS_FILE).write_text('{"item": "a#0", "predicted": "x"}\n{"item": 3}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"judgements\.jsonl, line 2: expected an object"):
        read_judgements(tmp_path)
    (tmp_path / JUDGEMENTS_FILE).write_text('{"item": "a#0"}\n{oops\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"judgements\.jsonl, line 2: not valid JSON"):
        read_judgements(tmp_path)
