import json

import pytest

from cfaug.evaluate.flip_rate import JudgeChoice
from cfaug.evaluate.pairs import load_pairs
from cfaug.evaluate.suite import EvaluationConfig, evaluate
from cfaug.evaluate.table import metrics_table

ROWS = [("1", "the film was good .", "the film was bad .", "positive", "negative"),
        ("2", "the plot was boring .", "the plot was fun .", "negative", "positive"),
        ("3", "i liked the acting", "i hated the acting", "positive", "negative")]


@pytest.fixture
def run_dir(tmp_path, make_run_dir, make_row):
    rows = [make_row(i, o, n, a, b, flipped=True, filters={"flip": True}) for i, o, n, a, b in ROWS]
    rows.append(make_row("3", "i liked the acting", "i liked the", "positive", "negative", passed=False,
                         filters={"flip": False}, flipped=False))
    return make_run_dir(tmp_path / "run", rows)


@pytest.fixture
def judge_data(tmp_path):
    f = tmp_path / "judge.tsv"
    lines = ["text\tlabel", "a good film\tpositive", "fun and great\tpositive", "i liked it\tpositive",
             "a bad film\tnegative", "boring and awful\tnegative", "i hated it\tnegative"]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def test_evaluate_names_every_setting(run_dir, judge_data, tiny_bert, tiny_gpt2):
    cfg = EvaluationConfig(judge=JudgeChoice(train_data=str(judge_data)), own_judge=True, embedding=False,
                           token_encoder=str(tiny_bert), mover_encoder=str(tiny_bert), lm=str(tiny_gpt2),
                           ngram_reference=str(judge_data), rouge_reference="original")
    res = evaluate(load_pairs(run_dir), cfg)
    assert list(res["groups"]) == ["auto-cad.v1"]
    g = res["groups"]["auto-cad.v1"]
    assert g["n"] == 3  # the rejected candidate is left out
    names = [m["name"] for m in g["metrics"]]
    assert names == ["flip_rate", "flip_rate_own_judge", "bertscore_f1", "h", "edit_rate", "mover_distance",
                     "perplexity", "ngram_perplexity", "self_bleu", "distinct_1", "distinct_2", "rouge"]
    by = {m["name"]: m for m in g["metrics"]}
    assert by["flip_rate"]["value"] == pytest.approx(1.0)
    assert by["flip_rate"]["settings"]["train_data_sha256"].startswith("sha256:")
    assert by["flip_rate_own_judge"]["settings"]["independent"] is False
    assert by["edit_rate"]["value"] == pytest.approx((0.2 + 0.2 + 0.25) / 3)
    assert by["perplexity"]["settings"]["bos_prepended"] is True
    assert by["h"]["settings"]["content"] == by["bertscore_f1"]["signature"]
    assert len(g["per_item"]["edit_rate"]) == 3
    json.dumps(res)  # JSON-ready
    assert "not independent" in metrics_table(res)


def test_judge_trained_on_the_generators_input_is_flagged(run_dir, judge_data):
    ps = load_pairs(run_dir)
    from cfaug.data.fingerprint import hash_source

    ps.run_config["input_hash"] = hash_source(judge_data)
    res = evaluate(ps, EvaluationConfig(judge=JudgeChoice(train_data=str(judge_data)), embedding=False,
                                        bertscore=False))
    m = res["groups"]["auto-cad.v1"]["metrics"][0]
    assert m["settings"]["independent"] is False and "not independent" in m["settings"]["note"]


def test_memorised_originals_are_reported(tmp_path, run_dir):
    f = tmp_path / "memo.tsv"
    f.write_text("text\tlabel\nthe film was good .\tpositive\nthe plot was boring .\tnegative\n", encoding="utf-8")
    logs = []
    res = evaluate(load_pairs(run_dir), EvaluationConfig(judge=JudgeChoice(train_data=str(f)), embedding=False,
                                                         bertscore=False), log=logs.append)
    m = res["groups"]["auto-cad.v1"]["metrics"][0]
    assert m["settings"]["originals_in_judge_training"] == pytest.approx(0.5)
    assert any("memorised" in line for line in logs)


def test_several_methods_get_their_own_groups(tmp_path, make_run_dir, make_row):
    rows = [make_row("1", "a good film", "a bad film", "positive", "negative", method="m1.v1"),
            make_row("2", "a bad plot", "a good plot", "negative", "positive", method="m2.v1")]
    res = evaluate(load_pairs(make_run_dir(tmp_path / "r", rows)), EvaluationConfig(embedding=False, bertscore=False))
    assert list(res["groups"]) == ["m1.v1", "m2.v1", "(all)"]
    assert res["groups"]["(all)"]["n"] == 2


def test_progress_bars_on_stderr_unless_disabled(run_dir, judge_data, capsys):
    cfg = EvaluationConfig(judge=JudgeChoice(train_data=str(judge_data)), embedding=False, bertscore=False)
    evaluate(load_pairs(run_dir), cfg, progress=True)
    err = capsys.readouterr().err
    assert "flip-rate judge: 100%" in err and "3/3 [" in err and "cf/s]" in err  # a tqdm bar
    evaluate(load_pairs(run_dir), cfg, progress=False)
    assert capsys.readouterr().err == ""


def test_without_a_judge_the_result_says_why_there_is_no_flip_rate(run_dir, judge_data):
    logs = []
    res = evaluate(load_pairs(run_dir), EvaluationConfig(embedding=False, bertscore=False), log=logs.append)
    names = [m["name"] for m in res["groups"]["auto-cad.v1"]["metrics"]]
    assert "flip_rate" not in names
    note = next(n for n in res["notes"] if n.startswith("flip rate:"))
    assert "no judge" in note and "--judge-train DATA" in note and "--judge DIR" in note
    assert note in logs
    with_judge = evaluate(load_pairs(run_dir), EvaluationConfig(judge=JudgeChoice(train_data=str(judge_data)),
                                                                embedding=False, bertscore=False))
    assert with_judge["notes"] == []
