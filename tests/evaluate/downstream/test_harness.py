import json

import pytest

from cfaug.data.tasks import make_task
from cfaug.evaluate.downstream import TrainCondition, load_labelled, markdown_table, run_downstream


def write_tsv(path, texts, labels):
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{y}\n" for t, y in zip(texts, labels)), encoding="utf-8")
    return path


def test_conditions_by_tests_table(tmp_path, toy_data):
    (x, y), (dx, dy), (tx, ty) = toy_data
    task = make_task("sentiment")
    train = load_labelled(write_tsv(tmp_path / "train.tsv", x, y), task, "original")
    aug_file = tmp_path / "cf.jsonl"
    rows = [{"text": t.replace("good", "bad") if lab == "positive" else t.replace("bad", "good"),
             "label": "negative" if lab == "positive" else "positive", "meta": {"passed": i % 10 != 0}}
            for i, (t, lab) in enumerate(zip(x, y))]
    aug_file.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    aug = load_labelled(aug_file, task, "cf")
    assert len(aug) == 54  # rows a filter rejected are left out
    dev = load_labelled(write_tsv(tmp_path / "dev.tsv", dx, dy), task, "dev")
    test = load_labelled(write_tsv(tmp_path / "test.tsv", tx, ty), task, "test", "in-domain")
    flipped = load_labelled(write_tsv(tmp_path / "flip.tsv", tx, ["negative" if t == "positive" else "positive" for t in ty]),
                            task, "nonsense", "challenge")
    res = run_downstream([TrainCondition("original", [train]), TrainCondition("original + cf", [train, aug])],
                         dev, [test, flipped], "tfidf-svm", {"c_grid": "1", "ngram_grid": "1"}, seeds=[0, 1])
    assert res.conditions["original + cf"]["rows"] == 114
    assert res.accuracy["original"]["test"] == [1.0, 1.0]
    assert res.accuracy["original"]["nonsense"] == [0.0, 0.0]
    assert res.summary("original", "test") == (1.0, 0.0)
    assert len(res.chosen["original"]) == 2 and res.chosen["original"][0]["C"] == 1.0
    table = markdown_table(res)
    # the SVM is deterministic here: every seed gave the same accuracy, shown once, without "± 0.0"
    assert "| original + cf | 114 | 100.0 | 0.0 |" in table and "±" not in table.split("\n\n")[0]
    assert "every seed (0, 1) gave the same accuracy" in table
    assert "test (in-domain, 30)" in table
    j = res.to_json()
    assert j["summary"]["original"]["test"]["mean"] == 1.0
    assert j["tests"]["test"]["sha256"].startswith("sha256:")


def test_summary_uses_sample_std():
    from cfaug.evaluate.downstream.harness import DownstreamResult

    r = DownstreamResult("c", {}, [0, 1, 2], {"o": {"rows": 1, "parts": []}}, {"t": {}}, {}, {"o": {"t": [0.8, 0.9, 1.0]}}, {})
    mean, sd = r.summary("o", "t")
    assert mean == pytest.approx(0.9) and sd == pytest.approx(0.1)


def test_bad_inputs(tmp_path):
    task = make_task("sentiment")
    with pytest.raises(ValueError, match="no usable"):
        load_labelled(write_tsv(tmp_path / "e.tsv", ["x"], ["maybe"]), task, "e")


def test_cells_where_every_seed_agreed_show_one_value():
    from cfaug.evaluate.downstream.harness import DownstreamResult

    r = DownstreamResult("bilstm", {}, [0, 1, 2], {"o": {"rows": 10, "parts": []}},
                         {"a": {"kind": "in-domain", "rows": 5}, "b": {"kind": "challenge", "rows": 5}},
                         {"source": "dev.tsv", "rows": 4},
                         {"o": {"a": [0.8, 0.9, 1.0], "b": [0.6, 0.6, 0.6]}}, {})
    table = markdown_table(r)
    assert "| o | 10 | 90.0 ± 10.0 | 60.0 (same for every seed) |" in table
    assert "mean ± sample std over seeds 0, 1, 2" in table


def test_one_seed_has_no_spread_to_show():
    from cfaug.evaluate.downstream.harness import DownstreamResult

    r = DownstreamResult("tfidf-svm", {}, [7], {"o": {"rows": 10, "parts": []}}, {"a": {"kind": "", "rows": 5}},
                         {"source": "dev.tsv", "rows": 4}, {"o": {"a": [0.75]}}, {})
    table = markdown_table(r)
    assert "| o | 10 | 75.0 |" in table and "±" not in table
    assert "Accuracy (%) with seed 7" in table
