"""``compare-generate``: the Compare&Generate loop against the scripted test server."""

from __future__ import annotations

import re

import pytest

from cfaug.cli import main

NEGATIVE = ("dull", "awful", "poor", "flat", "weak")
REVIEW = [{"id": "r1", "text": "A great film with a warm heart.", "label": "positive"}]


def negative_judge(scripted):
    return scripted.labels_by_words(NEGATIVE, "negative", "positive")


def revised(text: str) -> str:
    return f"Analysis: some thoughts.\n<revised>{text}</revised>"


def comparison(prompt: str) -> tuple[dict[str, str], str]:
    """The two texts a comparison prompt shows (by number) and its verdict line."""
    texts = dict(re.findall(r"^Revised text (\d): (.*)$", prompt, re.M))
    verdict = re.search(r"^Revised texts? (?:1 and 2 are equally \w+|\d is better than revised text \d)\.$", prompt, re.M)
    return texts, verdict.group(0)


def by_text(trajectory: list[dict], text: str) -> dict:
    return next(t for t in trajectory if t.get("text") == text)


def test_keeps_the_true_best_and_stops_after_patience_steps_without_improvement(serve, scripted, run_method):
    fine, dull = "A fine film with a warm heart.", "A dull film with a warm heart."
    model = scripted(**{
        "few-shot": [f"<revised>{fine}</revised>",                            # not flipped: loss 1 + 0.1 * 1/8
                     f"<revised>{dull}</revised>"],                           # flipped, 1 word: 0.0125
        "judge": negative_judge(scripted),
        "compare": [revised("A dull film with a cold heart."),                 # flipped, 2 words: worse
                    revised("A great film with a warm heart!"),                # not flipped: worse
                    revised("An awful film with a cold, cold heart."),         # flipped, more edits: worse
                    revised("A dull film with a cold heart."),
                    revised("A poor film with no heart at all."),
                    revised("A flat film.")],
    })
    srv = serve(model)
    summary, rows, _ = run_method("compare-generate", REVIEW, srv)
    assert len(rows) == 1
    meta = rows[0]["meta"]
    assert rows[0]["text"] == dull
    assert meta["stop"] == "patience" and meta["steps"] == 5
    assert len(model.asked["compare"]) == 5  # I_r = 5 steps without improvement, then stop
    traj = meta["trajectory"]
    assert [t["step"] for t in traj] == [0, 0, 1, 2, 3, 4, 5]
    assert traj[meta["best"]]["text"] == dull and meta["best_step"] == 0
    assert by_text(traj, dull)["score"] == pytest.approx(0.1 * 1 / 8)
    assert all(t["score"] >= meta["score"] for t in traj)  # the returned candidate really is the best
    assert by_text(traj, fine)["alignment"] == 1.0 and by_text(traj, fine)["label"] == "positive"
    assert not by_text(traj, fine)["aligned"]
    assert traj[2]["alignment"] == 0.0 and traj[2]["relevance"] == pytest.approx(2 / 8)
    assert meta["own_judge"] == {"name": "llm:judge-sentiment.v1", "flipped": True, "label": "negative"}
    assert summary.flip_rate_own_judge == 1.0
    # each comparison shows the best so far and the last candidate, in the order they were made, with their
    # scores and which is better
    texts, verdict = comparison(model.asked["compare"][0])
    assert sorted(texts.values()) == sorted([fine, dull])
    better = next(n for n, t in texts.items() if t == dull)
    assert verdict == f"Revised text {better} is better than revised text {3 - int(better)}."
    assert "Loss: 1.0125" in model.asked["compare"][0] and "Loss: 0.0125" in model.asked["compare"][0]
    second = model.asked["compare"][1]
    assert comparison(second) == ({"1": dull, "2": "A dull film with a cold heart."},
                                  "Revised text 1 is better than revised text 2.")
    assert "First analyse why revised text 1 is better than revised text 2." in second
    assert "Distance to the target sentiment: 0" in second and "Distance to the original text: 0.25" in second


def test_stops_at_max_steps_while_every_step_improves(serve, scripted, run_method):
    # long enough that even the first candidates, with 13 words replaced, keep most of the original's words
    # (an answer that keeps too few is not read as a rewrite at all)
    words = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
             "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
             "million").split()
    original = " ".join(words) + " great"

    def candidate(changed: int) -> str:  # flipped ("dull") and `changed` more words replaced than needed
        return " ".join(["x"] * changed + words[changed:]) + " dull"

    gens = [f"<revised>{candidate(n)}</revised>" for n in (13, 12)]
    steps = [revised(candidate(n)) for n in range(11, -1, -1)]
    model = scripted(**{"few-shot": gens, "compare": steps, "judge": negative_judge(scripted)})
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", [{"text": original, "label": "positive"}], srv)
    meta = rows[0]["meta"]
    assert meta["stop"] == "max_steps" and meta["steps"] == 10
    assert len(model.asked["compare"]) == 10
    assert rows[0]["text"] == candidate(2)  # the last, best candidate
    scores = [t["score"] for t in meta["trajectory"]]
    assert scores[2:] == sorted(scores[2:], reverse=True)

    model = scripted(**{"few-shot": gens, "compare": steps, "judge": negative_judge(scripted)})
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", [{"text": original, "label": "positive"}], srv, max_steps=3)
    assert rows[0]["meta"]["steps"] == 3 and len(model.asked["compare"]) == 3
    assert rows[0]["text"] == candidate(9)


def test_equally_bad_when_both_fail_with_the_same_loss(serve, scripted, run_method):
    model = scripted(**{
        "few-shot": ["<revised>A fine film with a warm heart.</revised>",
                     "<revised>A nice film with a warm heart.</revised>"],
        "judge": negative_judge(scripted),
        "compare": [revised("A dull film with a warm heart.")],
    })
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", REVIEW, srv, patience=2)
    first = model.asked["compare"][0]
    assert comparison(first)[1] == "Revised texts 1 and 2 are equally bad."
    assert "First analyse why both have a high loss." in first
    assert "is better than" not in first
    assert rows[0]["text"] == "A dull film with a warm heart." and rows[0]["meta"]["aligned"]
    # the next comparison pairs the new best with the old best (the earlier of the two equal ones)
    texts, verdict = comparison(model.asked["compare"][1])
    assert texts["2"] == "A dull film with a warm heart." and texts["1"] == rows[0]["meta"]["trajectory"][0]["text"]
    assert verdict == "Revised text 2 is better than revised text 1."


def test_unreadable_answers_are_failed_steps_and_the_loop_goes_on(serve, scripted, run_method):
    model = scripted(**{
        "few-shot": ["I am sorry, I cannot help with that.",
                     "<revised>A fine film with a warm heart.</revised>",
                     "<revised>A dull film with a warm heart.</revised>"],
        "judge": negative_judge(scripted),
        "compare": ["Sure, here is my analysis but I forgot the text.", revised("A dull film with a cold heart.")],
    })
    srv = serve(model)
    _, rows, lines = run_method("compare-generate", REVIEW, srv, patience=3)
    traj = rows[0]["meta"]["trajectory"]
    initial = sorted(traj[:2], key=lambda t: "error" in t)
    assert initial[0]["text"] == "A fine film with a warm heart."
    assert initial[1]["step"] == 0 and initial[1]["error"].startswith("unreadable answer")
    # with one readable candidate, step 1 asks the few-shot prompt again instead of comparing
    assert len(model.asked["few-shot"]) == 3 and traj[2]["step"] == 1
    assert traj[2]["text"] == "A dull film with a warm heart."
    assert traj[3]["step"] == 2 and traj[3]["error"].startswith("unreadable answer")
    assert [t["step"] for t in traj] == [0, 0, 1, 2, 3, 4]  # the unreadable step counts as one without improvement
    assert rows[0]["text"] == "A dull film with a warm heart."
    assert lines[0]["status"] == "ok"


def test_an_item_whose_answers_stay_unreadable_stops_after_max_unreadable_with_none(serve, scripted, run_method):
    """As with every LLM method, an item without one readable answer gets no counterfactual, not a failure: its
    line says why and is marked unreadable (--retry-failed draws it again)."""
    model = scripted(**{"few-shot": ["I cannot help with that."], "judge": ["positive"]})
    srv = serve(model)
    summary, rows, lines = run_method("compare-generate", REVIEW, srv)
    reason = lines[0]["reason"]
    assert reason.startswith("no readable answer: 3 unreadable answers in a row (max_unreadable=3)")
    assert rows == [] and summary.items_failed == 0 and summary.without_reasons == {reason: 1}
    assert lines[0]["status"] == "no_counterfactual" and "error" not in lines[0] and lines[0]["counterfactuals"] == []
    details = lines[0]["details"]
    assert details["unreadable"] is True
    assert details["stop"] == "max_unreadable" and [t["step"] for t in details["trajectory"]] == [0, 0, 1]
    assert len(model.asked["few-shot"]) == 3  # the two initial answers and one more sample, not 12 requests
    assert "judge" not in model.asked and srv.count() == 3


def test_the_search_stops_after_max_unreadable_answers_in_a_row_and_keeps_its_best(serve, scripted, run_method,
                                                                                     tmp_path):
    import json

    dull = "A dull film with a warm heart."
    model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>", f"<revised>{dull}</revised>"],
                        "judge": negative_judge(scripted), "compare": ["no tags here, just chatter"]})
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", REVIEW, srv, max_unreadable=2)
    meta = rows[0]["meta"]
    assert rows[0]["text"] == dull and meta["stop"] == "max_unreadable" and meta["steps"] == 2
    assert len(model.asked["compare"]) == 2  # then it stopped, instead of going on to patience (5)
    assert [t["step"] for t in meta["trajectory"]] == [0, 0, 1, 2] and "error" in meta["trajectory"][-1]
    [config] = [json.loads(p.read_text()) for p in tmp_path.glob("run-*/config.json")]
    assert config["params"]["max_unreadable"] == 2  # the run records the limit it used


def test_with_a_larger_max_unreadable_an_unreadable_item_gets_none_with_every_step_kept(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["I cannot help with that."], "judge": ["positive"]})
    srv = serve(model)
    summary, rows, lines = run_method("compare-generate", REVIEW, srv, max_steps=3, max_unreadable=10)
    assert rows == [] and summary.items_failed == 0 and sum(summary.without_reasons.values()) == 1
    assert lines[0]["status"] == "no_counterfactual"
    assert lines[0]["reason"].startswith("no readable candidate in 5 answer(s); the last: unreadable answer")
    assert lines[0]["details"]["unreadable"] is True
    assert [t["step"] for t in lines[0]["details"]["trajectory"]] == [0, 0, 1, 2, 3]
    assert "judge" not in model.asked


def test_judge_failures_count_as_misaligned_and_are_recorded(serve, scripted, run_method):
    def judge(prompt: str) -> str:
        text = scripted.quoted(prompt)
        if "cold" in text:
            return "it is hard to say"  # no label: unreadable
        return "negative" if "dull" in text else "positive"

    model = scripted(**{
        "few-shot": ["<revised>A fine film with a warm heart.</revised>", "<revised>A dull film with a cold heart.</revised>"],
        "judge": judge,
        "compare": [revised("A dull film with a warm heart.")],
    })
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", REVIEW, srv, patience=1)
    failed = by_text(rows[0]["meta"]["trajectory"], "A dull film with a cold heart.")
    assert failed["judge_error"].startswith("unreadable judge answer") and failed["alignment"] == 1.0
    assert "label" not in failed and not failed["aligned"]
    assert rows[0]["text"] == "A dull film with a warm heart."

    model = scripted(**{"few-shot": ["<revised>A dull film with a warm heart.</revised>",
                                     "<revised>A fine film with a warm heart.</revised>"],
                        "judge": negative_judge(scripted), "compare": [revised("A poor film with a warm heart.")]})
    srv = serve(model)
    srv.add(re.compile(r'Text: "A dull film with a warm heart\."'), "negative", faults=["400"])  # refused once
    _, rows, _ = run_method("compare-generate", REVIEW, srv, patience=1)
    refused = by_text(rows[0]["meta"]["trajectory"], "A dull film with a warm heart.")
    assert refused["judge_error"].startswith("judge request failed: LLMRequestError")
    assert rows[0]["text"] == "A poor film with a warm heart."


def test_not_aligned_best_is_marked_failed(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>"], "judge": ["positive"],
                        "compare": [revised("A nice film with a warm heart.")]})
    srv = serve(model)
    summary, rows, _ = run_method("compare-generate", REVIEW, srv, patience=1, keep_failed=False)
    assert rows == [] and summary.candidates_filtered_out == 1
    _, rows, _ = run_method("compare-generate", REVIEW, srv, patience=1, require_alignment=False)
    assert rows[0]["meta"]["passed"] and not rows[0]["meta"]["aligned"]
    assert rows[0]["meta"]["filters"] == {"changed": True}  # alignment not required: no verdict on it
    summary, rows, _ = run_method("compare-generate", REVIEW, srv, patience=1, keep_failed=True)
    assert rows[0]["meta"]["filters"] == {"aligned": False, "changed": True} and not rows[0]["meta"]["passed"]


def test_a_best_candidate_that_is_the_original_is_never_written(serve, scripted, run_method):
    original = REVIEW[0]["text"]
    model = scripted(**{"few-shot": [f"<revised>{original}</revised>", f"<revised> {original.upper()} </revised>"],
                        "judge": ["positive"], "compare": [revised(original)]})
    srv = serve(model)
    summary, rows, lines = run_method("compare-generate", REVIEW, srv, patience=1, require_alignment=False)
    assert rows == [] and summary.items_failed == 0 and summary.counterfactuals_written == 0
    assert lines[0]["status"] == "no_counterfactual"
    assert summary.without_reasons == {"the best candidate is the original text": 1}


def test_local_judge_makes_no_judge_requests(serve, scripted, run_method, tmp_path):
    train = tmp_path / "judge.tsv"
    train.write_text("text\tlabel\n" + "".join(
        f"{t}\t{lab}\n" for lab, ws in (("negative", NEGATIVE), ("positive", ("great", "warm", "lovely", "fine", "nice")))
        for w in ws for t in (f"a {w} film", f"the story is {w}", f"{w} acting and a {w} plot")), encoding="utf-8")
    model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>",
                                     "<revised>A dull film with a warm heart.</revised>"],
                        "compare": [revised("A dull, flat film with a warm heart.")]})
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", REVIEW, srv, judge="tfidf", judge_data=str(train), patience=2)
    assert "judge" not in model.asked and srv.count() == 4  # 2 initial + 2 steps, no judge call
    meta = rows[0]["meta"]
    assert meta["judge"] == {"name": "tfidf-logreg", "kind": "local"}
    assert rows[0]["text"] == "A dull film with a warm heart."
    assert meta["trajectory"][0]["label"] == "positive" and meta["trajectory"][1]["label"] == "negative"


def test_nli_revises_the_premise_and_keeps_the_hypothesis(serve, scripted, run_method):
    def judge(prompt: str) -> str:
        premise = scripted.quoted(prompt, "Premise")
        return "contradiction" if "asleep" in premise else "neutral" if "sofa" in premise else "entailment"

    def generate(prompt: str) -> str:
        target = re.findall(r"^Target relation: (\w+)", prompt, re.M)[-1]
        return "<revised>A man is asleep on a sofa.</revised>" if target == "contradiction" else \
            "<revised>A man is sitting on a sofa.</revised>"

    model = scripted(**{"few-shot": generate, "judge": judge, "compare": generate})
    srv = serve(model)
    data = [{"premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.", "label": "entailment"}]
    _, rows, _ = run_method("compare-generate", data, srv, task="nli", patience=1)
    by_target = {r["label"]: r for r in rows}
    assert set(by_target) == {"neutral", "contradiction"}
    assert by_target["contradiction"]["premise"] == "A man is asleep on a sofa."
    assert all(r["hypothesis"] == "A man is awake." for r in rows)
    assert by_target["neutral"]["meta"]["aligned"]
    compare = model.asked["compare"][0]
    assert "Revised premise 1:" in compare and "Distance to the target relation:" in compare
    assert "Hypothesis: A man is awake." in compare


def test_cli_lists_every_strategy(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in ("zero-shot.v1", "few-shot.v1", "cot.v1", "self-refine.v1", "opro.v1", "compare-generate.v1"):
        assert name in out
    assert "compare-generate.v1    [sentiment, nli, style]" in out


def test_the_small_prompt_set_compares_on_one_line_and_asks_for_no_analysis(serve, run_method):
    asked: list[tuple[dict, str]] = []
    worse = "A dull, awful film with a cold heart."

    def reply(body, prompt):
        asked.append((body, prompt))
        if "Attempt 1 (" in prompt:
            return " " + ("A dull film with a warm heart." if len(asked) < 4 else worse)
        return " A fine film with a warm heart."  # the start: not flipped

    srv = serve(reply)
    _, rows, _ = run_method("compare-generate", REVIEW, srv, prompt_set="small", judge="tfidf", max_steps=2,
                            patience=2)
    steps = [(b, p) for b, p in asked if "Attempt 1 (" in p]
    assert len(steps) == 2 and all(b["stop"] == ["\n"] for b, _ in steps)
    first = steps[0][1]
    assert "Revised text 1:" not in first and "analys" not in first.lower()
    assert "does not read negative" in first and first.endswith("Negative:")
    # the answer is one line: its budget is the source's, with no room for an analysis (512 tokens before)
    assert all(b["max_tokens"] <= len(REVIEW[0]["text"]) // 3 + 64 for b, _ in steps)
    assert rows[0]["text"] == worse and rows[0]["meta"]["aligned"]
