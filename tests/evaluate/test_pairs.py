import json

import pytest

from cfaug.data.schema import SchemaError
from cfaug.data.tasks import make_task
from cfaug.evaluate.pairs import load_pairs


def test_reads_contract_output_file(tmp_path):
    f = tmp_path / "out.jsonl"
    rows = [
        {"Text": "a bad film", "Sentiment": "Negative", "source_id": "7", "original_Text": "a good film",
         "original_Sentiment": "Positive", "method": "auto-cad.v1", "meta": {"passed": True, "variant": "rep-ct"}},
        {"Text": "a fine film", "Sentiment": "Negative", "source_id": "7", "original_Text": "a good film",
         "original_Sentiment": "Positive", "method": "auto-cad.v1", "meta": {"passed": False}},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    ps = load_pairs(f)
    assert [p.counterfactual for p in ps.pairs] == ["a bad film", "a fine film"]
    p = ps.pairs[0]
    assert (p.original, p.target, p.original_label, p.source_id) == ("a good film", "negative", "positive", "7")
    assert p.passed and not ps.pairs[1].passed
    assert p.meta["variant"] == "rep-ct"
    assert len(ps.only()) == 1 and len(ps.only(passed=None)) == 2


def test_reads_plain_original_counterfactual_target_table_with_repeated_ids(tmp_path):
    f = tmp_path / "pairs.csv"
    f.write_text("id,original,counterfactual,target\n1,it is good,it is bad,neg\n1,it is good,it is awful,neg\n"
                 "2,it is bad,,pos\n", encoding="utf-8")
    ps = load_pairs(f)
    assert [p.counterfactual for p in ps.pairs] == ["it is bad", "it is awful"]
    assert all(p.source_id == "1" for p in ps.pairs)
    assert len(ps.rejects) == 1
    assert "row 3" in ps.rejects[0].message() and "empty text" in ps.rejects[0].message()
    assert str(f) in ps.rejects[0].message()


def test_missing_original_column_is_a_reject_naming_the_column(tmp_path):
    f = tmp_path / "x.tsv"
    f.write_text("text\tlabel\nit is bad\tneg\n", encoding="utf-8")
    ps = load_pairs(f)
    assert not ps.pairs
    assert "original_text" in ps.rejects[0].problem


def test_explicit_columns_and_unknown_column_error(tmp_path):
    f = tmp_path / "x.tsv"
    f.write_text("before\tafter\tgoal\nnice\tnasty\tnegative\n", encoding="utf-8")
    ps = load_pairs(f, text_col="after", label_col="goal", original_col="before")
    assert (ps.pairs[0].original, ps.pairs[0].counterfactual) == ("nice", "nasty")
    with pytest.raises(SchemaError, match="x.tsv"):
        load_pairs(f, text_col="nope", label_col="goal")


def test_nli_pairs_use_the_edited_side_and_judge_both(tmp_path):
    f = tmp_path / "nli.jsonl"
    row = {"premise": "A man sleeps.", "hypothesis": "A man rests.", "label": "contradiction",
           "original_premise": "A man naps.", "original_hypothesis": "A man rests.", "original_label": "entailment"}
    f.write_text(json.dumps(row) + "\n", encoding="utf-8")
    ps = load_pairs(f, make_task("nli", edit_side="premise"))
    p = ps.pairs[0]
    assert (p.original, p.counterfactual) == ("A man naps.", "A man sleeps.")
    assert p.judge_input == ("A man sleeps.", "A man rests.")


def test_run_dir_includes_rejected_candidates(tmp_path, make_run_dir, make_row):
    rd = make_run_dir(tmp_path / "run", [
        make_row("1", "a good film", "a bad film", "positive", "negative", filters={"flip": True}),
        make_row("1", "a good film", "a film", "positive", "negative", passed=False, filters={"flip": False}),
    ])
    ps = load_pairs(rd)
    assert len(ps.pairs) == 2 and [p.passed for p in ps.pairs] == [True, False]
    assert ps.run_config["method"] == "auto-cad.v1"
    assert ps.task.name == "sentiment"


def test_run_dir_being_written_is_read_but_not_touched(tmp_path, make_run_dir, make_row):
    rd = make_run_dir(tmp_path / "run", [make_row("1", "a good film", "a bad film", "positive", "negative")])
    results = rd / "results.jsonl"
    with open(results, "a", encoding="utf-8") as fh:
        fh.write('{"key": "2", "counterfactuals": [{"text": "half')
    before = results.read_bytes()
    assert len(load_pairs(rd).pairs) == 1
    assert results.read_bytes() == before
