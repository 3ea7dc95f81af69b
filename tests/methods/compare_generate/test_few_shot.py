"""``few-shot``: task, two-step method, demonstrations, then the item; one request."""

from __future__ import annotations

import re

REVIEW = [{"id": "a", "text": "A great film with a warm heart.", "label": "positive"}]


def examples(prompt: str) -> list[str]:
    return re.findall(r"^Text: (.*)$", prompt, re.M)[:-1]


def test_few_shot_prompt_shape_with_built_in_demonstrations(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["<revised>A dull film with a cold heart.</revised>"]})
    srv = serve(model)
    summary, rows, _ = run_method("few-shot", REVIEW, srv)
    assert srv.count() == 1 and summary.extra["llm_requests"] == 1
    prompt = model.asked["few-shot"][0]
    assert prompt.index("Task:") < prompt.index("How: first find the words") < prompt.index("Example 1")
    assert prompt.index("Example 2") < prompt.index("Text: A great film with a warm heart.")
    assert "Example 3" not in prompt  # n_demos = 2
    # demonstrations going the same way (positive -> negative) come first
    assert prompt.count("Current sentiment: positive\nTarget sentiment: negative") == 3
    assert "Revised text: <revised>" in prompt
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "A dull film with a cold heart." and meta["strategy"] == "few-shot"
    assert len(meta["demos"]) == 2 and all(d.startswith("builtin:sentiment-") for d in meta["demos"])
    assert meta["llm"]["answers"] == 1 and meta["llm"]["prompts"] == ["few-shot-sentiment.v1"]


def test_demonstrations_from_a_paired_file_seeded_per_item(serve, scripted, run_method, fixtures):
    model = scripted(**{"few-shot": ["<revised>A dull film with a cold heart.</revised>"]})
    srv = serve(model)
    data = REVIEW + [{"id": "b", "text": "The best cast I have seen in years.", "label": "positive"}]
    demos = str(fixtures / "imdb_paired.tsv")
    _, rows, _ = run_method("few-shot", data, srv, demos=demos, n_demos=3)
    prompts = sorted(model.asked["few-shot"], key=lambda p: "A great film" in p)
    shown = [examples(p) for p in prompts]
    assert all(len(s) == 3 for s in shown)
    paired = (fixtures / "imdb_paired.tsv").read_text(encoding="utf-8")
    assert all(t in paired for s in shown for t in s)
    for p in prompts:  # positive originals: every demonstration goes from positive to negative
        assert p.count("Current sentiment: positive\nTarget sentiment: negative") == 4
    # the same item gets the same demonstrations in another run (seeded by the item)
    model2 = scripted(**{"few-shot": ["<revised>A dull film with a cold heart.</revised>"]})
    srv2 = serve(model2)
    _, rows2, _ = run_method("few-shot", data, srv2, demos=demos, n_demos=3)
    assert {r["source_id"]: r["meta"]["demos"] for r in rows} == {r["source_id"]: r["meta"]["demos"] for r in rows2}


def test_unchanged_answer_is_never_written(serve, scripted, run_method):
    model = scripted(**{"few-shot": ["<revised>  a great film  with a WARM heart. </revised>"]})
    srv = serve(model)
    summary, rows, lines = run_method("few-shot", REVIEW, srv)  # keep_failed=True: still not written
    assert rows == [] and summary.counterfactuals_written == 0 and summary.items_failed == 0
    assert lines[0]["status"] == "no_counterfactual" and lines[0]["reason"] == "the answer is the original text"
    assert summary.without_reasons == {"the answer is the original text": 1}


def test_prompt_parameter_overrides_the_main_prompt(serve, scripted, run_method, tmp_path):
    own = tmp_path / "mine.v1.j2"
    own.write_text("{#-\nparser: revised_text\n-#}\nFlip this in the same way as the examples: {{ text }} -> {{ target }}"
                   " ({{ demos|length }} examples)\n", encoding="utf-8")
    model = scripted(**{"few-shot": ["<revised>A dull film.</revised>"]})
    srv = serve(model)
    _, rows, _ = run_method("few-shot", REVIEW, srv, prompt=str(own))
    assert model.asked["few-shot"] == ["Flip this in the same way as the examples: A great film with a warm heart. "
                                      "-> negative (2 examples)"]
