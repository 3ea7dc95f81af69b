"""``opro``: solution-score pairs, worst to best, for a fixed number of steps."""

from __future__ import annotations

import re

NEGATIVE = ("dull", "awful", "poor", "flat")
REVIEW = [{"text": "A great film with a warm heart.", "label": "positive"}]


def shown(prompt: str) -> list[tuple[str, float]]:
    """(revised text, loss) pairs listed in an OPRO prompt, in order."""
    return [(t, float(loss)) for t, loss in re.findall(r"^Revised text: (.*)\n(?:.*\n){2}Loss: ([\d.]+)$", prompt, re.M)]


def test_opro_lists_scored_solutions_worst_to_best_for_ten_steps(serve, scripted, run_method):
    steps = [f"<revised>{t}</revised>" for t in (
        "A dull film with a cold heart.", "A great film with a warm heart!", "A dull film with a warm heart.",
        "An awful film with a cold heart.")]
    model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>",
                                     "<revised>A poor film with a cold heart.</revised>"],
                        "judge": scripted.labels_by_words(NEGATIVE, "negative", "positive"), "opro": steps})
    srv = serve(model)
    _, rows, _ = run_method("opro", REVIEW, srv)
    assert len(model.asked["opro"]) == 10  # no early stop
    assert len(model.asked["few-shot"]) == 2
    assert len(model.asked["judge"]) == 6  # one per distinct candidate
    first = shown(model.asked["opro"][0])
    assert [t for t, _ in first] == ["A fine film with a warm heart.", "A poor film with a cold heart."]
    assert first[0][1] > first[1][1]  # worst first
    last = shown(model.asked["opro"][-1])
    assert len(last) == 6 and [loss for _, loss in last] == sorted((loss for _, loss in last), reverse=True)
    assert last[-1][0] == "A dull film with a warm heart."
    prompt = model.asked["opro"][0]
    assert "Distance to the target sentiment: 1" in prompt and "Loss: 1.0125" in prompt
    assert "A lower loss is better." in prompt and "weighted by 0.1" in prompt
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "A dull film with a warm heart." and meta["steps"] == 10
    assert len(meta["trajectory"]) == 12 and meta["trajectory"][meta["best"]]["text"] == rows[0]["text"]
    assert {"text", "alignment", "relevance", "score", "step"} <= set(meta["trajectory"][5])


def test_opro_history_keeps_the_best_solutions(serve, scripted, run_method):
    steps = [f"<revised>A {w} film with a warm heart.</revised>" for w in ("dull", "poor", "flat", "awful")]
    model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>",
                                     "<revised>A nice film with a warm heart.</revised>"],
                        "judge": scripted.labels_by_words(NEGATIVE, "negative", "positive"), "opro": steps})
    srv = serve(model)
    run_method("opro", REVIEW, srv, steps=4, history=2)
    listed = shown(model.asked["opro"][-1])
    assert len(listed) == 2 and all("film with a warm heart" in t for t, _ in listed)
    assert all(loss < 1 for _, loss in listed)  # the two unflipped ones dropped out


def test_opro_stops_an_item_after_max_unreadable_answers_in_a_row(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["<revised>A dull film with a warm heart.</revised>", "I will not do that."],
                        "judge": scripted.labels_by_words(NEGATIVE, "negative", "positive"),
                        "opro": ["nothing useful"]})
    srv = serve(model)
    _, rows, _ = run_method("opro", REVIEW, srv)
    # one readable candidate, then unreadable: the second initial answer and two resamples make three in a row
    assert len(model.asked["few-shot"]) == 4 and "opro" not in model.asked
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "A dull film with a warm heart."
    assert meta["stop"] == "max_unreadable" and meta["steps"] == 2 and len(meta["trajectory"]) == 4


def test_opro_gives_an_item_no_counterfactual_when_no_answer_is_readable(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["I will not do that."], "judge": ["positive"]})
    srv = serve(model)
    summary, rows, lines = run_method("opro", REVIEW, srv, max_unreadable=4)
    assert rows == [] and lines[0]["status"] == "no_counterfactual" and summary.items_failed == 0
    assert lines[0]["reason"].startswith("no readable answer: 4 unreadable answers in a row (max_unreadable=4)")
    assert summary.without_reasons == {lines[0]["reason"]: 1}
    assert lines[0]["details"]["unreadable"] is True
    assert len(lines[0]["details"]["trajectory"]) == 4
    assert srv.count() == 4  # not the 12 answers of ten steps
