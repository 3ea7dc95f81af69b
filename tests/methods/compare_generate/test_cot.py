"""``cot``: demonstrations spell out causal words and replacements before the revision."""

from __future__ import annotations

REVIEW = [{"text": "A great film with a warm heart.", "label": "positive"}]


def test_cot_prompt_shows_reasoning_steps_and_keeps_the_models_reasoning(serve, scripted, run_method, fixtures):
    answer = ('Causal words: "great", "warm"\nReplacements: "great" becomes "dull"; "warm" becomes "cold"\n'
              "Revised text: <revised>A dull film with a cold heart.</revised>")
    model = scripted(cot=[answer])
    srv = serve(model)
    _, rows, _ = run_method("cot", REVIEW, srv, demos=str(fixtures / "imdb_paired.tsv"), n_demos=4)
    prompt = model.asked["cot"][0]
    assert srv.count() == 1
    # all four positive -> negative pairs are shown; this one with the words its rewrite changed
    assert "Text: Long, fascinating, soulful. Never have I been so sad to see ending credits roll." in prompt
    assert 'Causal words: "fascinating, soulful", "sad"' in prompt
    assert 'Replacements: "fascinating, soulful" becomes "boring, blasphemous"; "sad" becomes "glad"' in prompt
    assert prompt.count("Causal words: ") == 5 and prompt.count("Replacements: ") == 5  # 4 examples + the ask
    assert prompt.rstrip().endswith("Revised text: the whole revised text, between <revised> and </revised>")
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "A dull film with a cold heart."
    assert meta["reasoning"] == {"causal_words": '"great", "warm"',
                                 "replacements": '"great" becomes "dull"; "warm" becomes "cold"'}


def test_cot_nli_prompt_for_hypothesis_edits(serve, scripted, run_method, fixtures):
    model = scripted(cot=["Causal words: awake\nReplacements: asleep\nRevised hypothesis: <revised>A man is asleep.</revised>"])
    srv = serve(model)
    data = [{"premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.", "label": "entailment"}]
    _, rows, _ = run_method("cot", data, srv, task="nli", edit_side="hypothesis",
                            demos=str(fixtures / "snli_original.tsv"),
                            demos_revised=str(fixtures / "snli_revised_hypothesis.tsv"))
    prompt = model.asked["cot"][0]
    assert "Revise the next pair in the same way, step by step." in prompt
    assert "Revised hypothesis: <revised>" in prompt and "The premise stays as it is." in prompt
    assert all(r["hypothesis"] == "A man is asleep." and r["premise"] == "A man is reading on a sofa." for r in rows)


def test_an_answer_that_is_the_original_is_never_written(serve, scripted, run_method):
    review = [{"id": "a", "text": "A great film with a warm heart.", "label": "positive"}]
    model = scripted(cot=["Causal words: great\nReplacements: none needed\n"
                          "Revised text: <revised>A great film with a warm heart.</revised>"])
    srv = serve(model)
    summary, rows, lines = run_method("cot", review, srv)
    assert rows == [] and summary.without_reasons == {"the answer is the original text": 1}
    assert lines[0]["status"] == "no_counterfactual"
