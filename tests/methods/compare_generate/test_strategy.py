"""What the strategies share (run facts, parameter checks), and the style task they support."""

from __future__ import annotations

import json
import re

import pytest

from cfaug.cli import main
from cfaug.data.labels import LabelError
from cfaug.data.tasks import make_task

FORMAL = [{"id": "s1", "text": "I regret that I cannot attend the meeting.", "label": "formal"}]


def test_style_task_names_styles_and_their_spellings():
    task = make_task("style")
    assert task.label_space.labels == ("informal", "formal") and task.roles == ("text",)
    assert task.label_space.canonical("Casual") == "informal" and task.label_space.canonical("FORMAL") == "formal"
    assert make_task("style", target="informal").target == "informal"
    custom = make_task("style", levels=("plain", "poetic"), target="poetic")
    assert custom.label_space.labels == ("plain", "poetic")
    with pytest.raises(LabelError, match="unknown label 'poetic'"):
        make_task("style", target="poetic")


def test_compare_generate_maximises_the_style_score(serve, scripted, run_method):
    def judge(prompt: str) -> str:
        text = scripted.quoted(prompt)
        return "5" if "gonna" in text else "4" if "cant" in text else "1"

    model = scripted(**{"few-shot": ["<revised>I cannot attend the meeting, sorry.</revised>",
                                     "<revised>cant make the meeting, sorry</revised>"],
                        "judge": judge,
                        "compare": ["The second one is better.\n<revised>sorry, not gonna make the meeting</revised>",
                                    "<revised>cant attend the meeting</revised>"]})
    srv = serve(model)
    summary, rows, _ = run_method("compare-generate", FORMAL, srv, task="style", patience=2, demo_selection="similar")
    assert rows[0]["label"] == "informal" and rows[0]["text"] == "sorry, not gonna make the meeting"
    meta = rows[0]["meta"]
    assert meta["objective"] == {"direction": "maximise", "alpha": 0.1, "relevance": "embedding",
                                 "style_threshold": 4.0, "style_range": [1.0, 5.0]}
    assert meta["aligned"]
    best = meta["trajectory"][meta["best"]]
    assert best["alignment"] == 5.0 and best["score"] == pytest.approx(5.0 + 0.1 * best["relevance"])
    assert all(t["score"] <= best["score"] for t in meta["trajectory"])
    judge_prompt = model.asked["judge"][0]
    assert "Informal style score: 5" in judge_prompt and judge_prompt.rstrip().endswith("Informal style score:")
    compare = model.asked["compare"][0]
    assert "Informal style score: 4" in compare and "Informal style score: 1" in compare
    assert "A higher score is better." in compare and "Then write a new revised text with a higher score." in compare
    assert "cosine similarity of the two texts' sentence embeddings" in compare
    # the closest built-in demonstration by embedding: formal -> informal, about attending something
    assert "Text: I regret to inform you that the event has been cancelled." in model.asked["few-shot"][0]
    assert summary.flip_rate_own_judge == 1.0


def test_run_facts_name_prompts_demonstrations_judge_and_objective(serve, scripted, run_method, tmp_path):
    model = scripted(**{"few-shot": ["<revised>A dull film.</revised>"], "judge": ["negative"],
                        "opro": ["<revised>A dull film.</revised>"]})
    srv = serve(model)
    run_method("opro", [{"text": "A great film.", "label": "positive"}], srv, steps=1)
    manifest = json.loads(next(tmp_path.glob("run-*/manifest.json")).read_text())
    facts = manifest["method_facts"]
    assert set(facts["prompts"]) == {"opro-sentiment.v1", "few-shot-sentiment.v1", "judge-sentiment.v1"}
    assert all(len(p["sha256"]) == 64 for p in facts["prompts"].values())
    assert facts["demonstrations"] == {"source": "built-in", "count": 12, "per_item": 2, "selection": "seeded"}
    assert facts["judge"]["judge"] == "llm:judge-sentiment.v1"
    assert facts["objective"] == {"direction": "minimise", "alpha": 0.1, "relevance": "token"}
    summary = json.loads(next(tmp_path.glob("run-*/summary.json")).read_text())
    usage = summary["extra"]["llm_usage"]
    assert usage["opro.v1/judge"]["requests"] == 1 and usage["opro.v1/generate"]["requests"] == 3


def test_zero_shot_and_the_cli_accept_the_style_task(serve, scripted, tmp_path):
    model = scripted(other=["<revised>cant make the meeting, sorry</revised>"])
    srv = serve(model)
    inp = tmp_path / "style.tsv"
    inp.write_text("text\tlabel\nI regret that I cannot attend the meeting.\tformal\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["augment", str(inp), "-o", str(out), "--task", "style", "--method", "zero-shot", "--llm-base-url",
                 srv.base_url, "--llm-model", "m", "--no-progress"]) == 0
    row = json.loads(out.read_text().splitlines()[0])
    assert row["label"] == "informal" and row["text"] == "cant make the meeting, sorry"
    assert "Rewrite the text below so that its style becomes informal." in model.asked["other"][0]


@pytest.mark.parametrize("param, message", [
    ("demo_selection=best", "parameter demo_selection of compare-generate.v1: 'best' is not one of auto, seeded, similar"),
    ("n_demos=0", "parameter n_demos of compare-generate.v1: 0 is below the minimum 1"),
    ("patience=0", "parameter patience of compare-generate.v1: 0 is below the minimum 1"),
    ("demos_revised=x.tsv", "demos_revised needs demos=PATH"),
    ("judge=gpt", "judge must be one of tfidf, hf, llm or a judge spec, got 'gpt'"),
])
def test_bad_parameters_stop_with_a_clear_error(tmp_path, capsys, param, message):
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\nA great film.\tpositive\n", encoding="utf-8")
    code = main(["augment", str(inp), "-o", str(tmp_path / "o.jsonl"), "--method", "compare-generate",
                 "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "-p", param, "--no-progress"])
    assert code == 2
    assert message in capsys.readouterr().err


def test_rating_is_not_a_strategy_task(tmp_path, capsys):
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\nA great film.\t5\n", encoding="utf-8")
    assert main(["augment", str(inp), "--task", "rating", "--method", "few-shot", "--llm-base-url",
                 "http://127.0.0.1:9/v1", "--llm-model", "m", "--no-progress"]) == 2
    assert re.search(r"supports tasks sentiment, nli, style, not 'rating'", capsys.readouterr().err)
