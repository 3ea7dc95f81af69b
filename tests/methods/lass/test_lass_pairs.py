"""``lass-pairs``: the paper's instruction, five CAD-IMDB demonstrations, temperature 0.2; its output is a
pairs file ``cfaug train lass`` reads."""

from __future__ import annotations

import json
import re

from cfaug.api import run_augment
from cfaug.data.paired import read_pairs
from cfaug.methods.lass.training import sentiment_pairs

DATA = [{"id": "a", "text": "the pizza was great and the staff were friendly .", "label": "positive"},
        {"id": "b", "text": "cold fries and a rude cashier .", "label": "negative"}]
FLIPS = {"the pizza was great and the staff were friendly .": "the pizza was awful and the staff were rude .",
         "cold fries and a rude cashier .": "hot fries and a polite cashier ."}


def run(tmp_path, monkeypatch, fake_llm, **params):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    bodies = []

    def reply(body, prompt):
        bodies.append(body)
        item = re.findall(r"^Review \([^)]*\): (.*)$", prompt, re.M)[-1]
        return f"<revised>{FLIPS[item]}</revised>"

    with fake_llm.FakeLLM(default_reply=reply) as srv:
        llm = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01, "request_timeout": 10}
        summary, rows = run_augment(DATA, "lass-pairs", run_dir=tmp_path / "run", progress=False,
                                    output=tmp_path / "pairs.jsonl",
                                    params={"llm": llm, **params})
    return summary, rows, bodies


def test_prompt_holds_the_instruction_five_cad_pairs_and_temperature(tmp_path, monkeypatch, fake_llm):
    summary, rows, bodies = run(tmp_path, monkeypatch, fake_llm)
    assert len(bodies) == 2 and all(b["temperature"] == 0.2 for b in bodies)
    system, user = bodies[0]["messages"][0]["content"], bodies[0]["messages"][1]["content"]
    assert "retains internal coherence and avoids unnecessary changes" in system
    shown = re.findall(r"^Review \(([a-z]+)\): (.*)$", user, re.M)
    assert len(shown) == 6  # five demonstrations and the item
    cad = open_cad()
    assert all(" ".join(text.split()) in cad for _, text in shown[:5])  # the demonstrations are the shipped CAD-IMDB pairs
    assert user.count("<revised>") == 6  # five demonstrations and the answer instruction
    assert {r["text"] for r in rows} == set(FLIPS.values())
    assert all(r["meta"]["demos"] and len(r["meta"]["demos"]) == 5 for r in rows)


def test_output_is_a_pairs_file_for_lass(tmp_path, monkeypatch, fake_llm):
    run(tmp_path, monkeypatch, fake_llm)
    pairs, left = sentiment_pairs(read_pairs(tmp_path / "pairs.jsonl").pairs)
    assert left == 0 and {(p.positive, p.negative) for p in pairs} == {
        ("the pizza was great and the staff were friendly .", "the pizza was awful and the staff were rude ."),
        ("hot fries and a polite cashier .", "cold fries and a rude cashier .")}


def test_user_demonstrations_and_k(tmp_path, monkeypatch, fake_llm):
    demos = tmp_path / "demos.tsv"
    demos.write_text("batch_id\tSentiment\tText\n1\tPositive\tgood soup .\n1\tNegative\tbad soup .\n"
                     "2\tPositive\tnice room .\n2\tNegative\tdirty room .\n")
    _, _, bodies = run(tmp_path, monkeypatch, fake_llm, demos=str(demos), n_demos=2)
    user = bodies[0]["messages"][1]["content"]
    assert len(re.findall(r"^Review \(", user, re.M)) == 3


def open_cad() -> set[str]:
    import csv
    import io
    from importlib import resources

    text = (resources.files("cfaug.resources") / "demonstrations" / "cad_imdb_pairs.tsv").read_text(encoding="utf-8")
    return {" ".join(r["Text"].split()) for r in csv.DictReader(io.StringIO(text), delimiter="\t")}


def test_results_lines_carry_the_prompt_name(tmp_path, monkeypatch, fake_llm):
    run(tmp_path, monkeypatch, fake_llm)
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines() if x.strip()]
    assert any("lass-pairs-sentiment.v1" in json.dumps(x) for x in lines)
