"""The Compare&Generate family's ``paper`` preset end to end through the command line (``cfaug augment
--method compare-generate --preset paper``, and the family's baselines) against the scripted loopback server,
which answers the initial few-shot candidates, the comparison steps and the label judge. The checks read the
written rows, their ``meta`` and the run summary, never the preset's values."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest


NEGATIVE = ("dull", "poor", "flat", "cold", "slow")

GREAT = "A great film with a warm heart."      # positive -> negative: flipped, then a tie, then worse rewrites
FLAT = "The plot is dull and the acting is flat."  # negative -> positive: no answer ever reaches the target
LOVELY = "A lovely story told with care."      # every answer repeats the original: nothing is written
ROWS = [("r1", "positive", GREAT), ("r2", "negative", FLAT), ("r3", "positive", LOVELY)]

#: per original text, the answers to its few-shot start (in order) and to its comparison steps (in order, the
#: last one repeated)
ANSWERS = {
    GREAT: (["A fine film with a warm heart.", "A dull film with a warm heart."],
            ["A poor film with a warm heart.",            # the same loss as the best ("dull"): a tie
             "A dull film with a cold heart.",            # flipped, more edits: worse, from here on
             "An awful, poor film with a cold heart.",
             "A flat film with a cold, cold heart."]),
    FLAT: (["The plot is slow and the acting is flat.", "The plot is dull and the acting is cold."],
           ["The plot is slow and the acting is flat!"]),
    LOVELY: ([LOVELY, f" {LOVELY.upper()} "], [LOVELY]),
}


class Model:
    """The scripted LLM: tells the prompts apart, answers each text's own queue, and logs what it was asked."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked: dict[tuple[str, str], list[str]] = {}

    def __call__(self, body, prompt: str) -> str:
        if "Classify the next text" in prompt:
            judged = re.findall(r'^Text: "(.*)"$', prompt, re.M)[-1].lower()
            return "negative" if any(w in judged for w in NEGATIVE) else "positive"
        if "Revised text 1:" in prompt:
            kind, text = "compare", re.search(r"^Text: (.*)$", prompt, re.M).group(1)
        elif "Following the example" in prompt:
            kind, text = "few-shot", re.findall(r"^Text: (.*)$", prompt, re.M)[-1]
        else:
            raise AssertionError(f"unexpected prompt:\n{prompt}")
        with self.lock:
            asked = self.asked.setdefault((kind, text), [])
            asked.append(prompt)
            queue = ANSWERS[text][0 if kind == "few-shot" else 1]
            answer = queue[min(len(asked), len(queue)) - 1]
        if kind == "few-shot":
            return f"<revised>{answer}</revised>"
        return f"Analysis: some thoughts.\n<revised>{answer}</revised>"


@pytest.fixture
def reviews(tmp_path) -> Path:
    path = tmp_path / "reviews.tsv"
    path.write_text("id\tlabel\ttext\n" + "".join(f"{i}\t{lab}\t{t}\n" for i, lab, t in ROWS), encoding="utf-8")
    return path


def test_paper_preset_end_to_end_compare_generate(tmp_path, reviews, serve, cli, read_jsonl):
    model = Model()
    srv = serve(model)
    out = tmp_path / "cg.jsonl"
    code, _, err = cli("augment", reviews, "-o", out, "--method", "compare-generate", "--preset", "paper",
                       "--llm-base-url", srv.base_url, "--llm-model", "test-model", "--concurrency", "1",
                       "--no-progress", "--seed", "0")
    assert code == 0, err
    rows = {r["source_id"]: r for r in read_jsonl(out)}
    summary = json.loads(Path(f"{out}.run/summary.json").read_text())

    # one item is written flipped, one written although no candidate reached the target, one not written
    assert set(rows) == {"r1", "r2"}
    assert summary["without_reasons"] == {"the best candidate is the original text": 1}
    assert summary["counterfactuals_written"] == 2 and summary["items_failed"] == 0

    # the few-shot start shows one demonstration (the paper's layout) and makes two candidates per item
    for text in (GREAT, FLAT, LOVELY):
        starts = model.asked[("few-shot", text)]
        assert len(starts) == 2 and all(p.count("\nExample ") + p.startswith("Example ") == 1 for p in starts)

    great = rows["r1"]
    m = great["meta"]
    assert great["label"] == "negative" and great["original_text"] == GREAT
    # a candidate with the same score as the best replaces it (the paper's Algorithm 1), so the tie of step 1
    # is the result; the loop then stops after its run of steps without improvement
    assert great["text"] == "A poor film with a warm heart." and m["best_step"] == 1
    assert m["stop"] == "patience" and m["steps"] == len(model.asked[("compare", GREAT)])
    traj = m["trajectory"]
    tie = next(t for t in traj if t.get("text") == "A dull film with a warm heart.")
    assert tie["score"] == m["score"] and traj[m["best"]]["text"] == great["text"]
    assert all(t["score"] >= m["score"] for t in traj if "score" in t)
    assert m["aligned"] and m["passed"] and m["own_judge"]["flipped"] is True
    assert m["objective"]["ties"] == "latest"
    # the comparison after the tie shows the new best next to the one it replaced
    second = model.asked[("compare", GREAT)][1]
    assert "A dull film with a warm heart." in second and "A poor film with a warm heart." in second

    flat = rows["r2"]
    m = flat["meta"]
    # the best candidate is returned even though the judge never gives it the target
    assert flat["label"] == "positive" and flat["text"] != FLAT
    assert not m["aligned"] and m["passed"] and "aligned" not in m["filters"]
    assert m["own_judge"]["flipped"] is False and all(not t.get("aligned") for t in m["trajectory"])
    assert flat["text"] == m["trajectory"][m["best"]]["text"]

    for r in rows.values():
        prompts = r["meta"]["llm"]["prompts"]
        assert {"few-shot-sentiment-paper.v1", "compare-generate-sentiment.v1", "judge-sentiment.v1"} <= set(prompts)


@pytest.mark.parametrize("method", ["few-shot", "cot", "self-refine", "opro"])
def test_paper_preset_end_to_end_compare_generate_baselines(tmp_path, reviews, serve, method, cli, read_jsonl):
    """The family's baselines under the paper preset: every request is answered with a flip of its text."""
    flips = {GREAT: "A dull film with a warm heart.", FLAT: "The plot is lively and the acting is sharp.",
             LOVELY: LOVELY}  # the last repeats its source: nothing is written for it

    def reply(body, prompt: str) -> str:
        if "Classify the next text" in prompt:
            judged = re.findall(r'^Text: "(.*)"$', prompt, re.M)[-1].lower()
            return "negative" if any(w in judged for w in NEGATIVE) else "positive"
        if "Give your feedback" in prompt:
            return "It still reads the old way."
        text = next(t for t in flips if t in prompt.rsplit("Example", 1)[-1])
        return f"Reasoning.\n<revised>{flips[text]}</revised>"

    srv = serve(reply)
    out = tmp_path / f"{method}.jsonl"
    code, _, err = cli("augment", reviews, "-o", out, "--method", method, "--preset", "paper", "--llm-base-url",
                       srv.base_url, "--llm-model", "test-model", "--no-progress", "--seed", "0")
    assert code == 0, err
    rows = {r["source_id"]: r for r in read_jsonl(out)}
    assert set(rows) == {"r1", "r2"}
    for sid, target in (("r1", "negative"), ("r2", "positive")):
        r = rows[sid]
        assert r["label"] == target and r["method"] == f"{method}.v1"
        assert r["text"] == flips[r["original_text"]]
        prompts = r["meta"]["llm"]["prompts"]
        assert any(p.endswith("-paper.v1") for p in prompts)  # the paper's prompt set
    summary = json.loads(Path(f"{out}.run/summary.json").read_text())
    assert summary["items_without_counterfactual"] == 1 and summary["items_failed"] == 0
