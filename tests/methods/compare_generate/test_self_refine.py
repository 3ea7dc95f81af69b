"""``self-refine``: a few-shot revision, then feedback and refinement for four rounds."""

from __future__ import annotations

import re

REVIEW = [{"text": "A great film with a warm heart.", "label": "positive"}]


def test_feedback_then_refine_four_rounds(serve, scripted, run_method):
    def refine(prompt: str) -> str:
        n = int(re.search(r"Feedback: note (\d)", prompt).group(1))
        return f"<revised>A dull film with a cold heart, take {n}.</revised>"

    def feedback(prompt: str) -> str:
        return f"note {len(model.asked['feedback'])}: the word 'heart' still sounds warm."

    model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>"], "feedback": feedback,
                        "refine": refine})
    srv = serve(model)
    summary, rows, _ = run_method("self-refine", REVIEW, srv)
    assert summary.extra["llm_requests"] == 9  # 1 + 2 x 4
    assert model.order == ["few-shot"] + ["feedback", "refine"] * 4
    first_feedback = model.asked["feedback"][0]
    assert "Original text: A great film with a warm heart." in first_feedback
    assert "Revised text: A fine film with a warm heart." in first_feedback
    assert "Why is the revised text not clearly negative?" in first_feedback
    second_refine = model.asked["refine"][1]
    assert "Revised text: A dull film with a cold heart, take 1." in second_refine
    assert "Feedback: note 2: the word 'heart' still sounds warm." in second_refine
    assert "so that its sentiment is clearly negative" in second_refine
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "A dull film with a cold heart, take 4." and meta["rounds"] == 4
    assert [t["round"] for t in meta["trajectory"]] == [0, 1, 2, 3, 4]
    assert meta["trajectory"][2] == {"round": 2, "feedback": "note 2: the word 'heart' still sounds warm.",
                                     "text": "A dull film with a cold heart, take 2."}
    assert summary.extra["llm_usage"]["self-refine.v1/feedback"]["requests"] == 4


def test_an_unreadable_refinement_ends_the_rounds_with_the_last_revision(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["<revised>A dull film with a warm heart.</revised>"],
                        "feedback": ["It still reads warm."],
                        "refine": ["<revised>A dull film with a cold heart.</revised>", "I cannot improve it."]})
    srv = serve(model)
    _, rows, _ = run_method("self-refine", REVIEW, srv)
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "A dull film with a cold heart." and meta["rounds"] == 1
    assert meta["trajectory"][-1]["error"].startswith("unreadable answer")
    assert len(model.asked["refine"]) == 2


def test_a_last_revision_that_is_the_original_is_never_written(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["<revised>A dull film with a warm heart.</revised>"],
                        "feedback": ["The edit was not needed."],
                        "refine": ["<revised>A great film with a warm heart.</revised>"]})
    srv = serve(model)
    summary, rows, lines = run_method("self-refine", REVIEW, srv, rounds=1)  # keep_failed=True
    assert rows == [] and summary.items_failed == 0
    assert lines[0]["status"] == "no_counterfactual" and lines[0]["reason"] == "the last revision is the original text"
