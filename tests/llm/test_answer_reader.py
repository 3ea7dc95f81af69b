"""The answer reader's hygiene: only the rewrite is taken (commentary cut), and only when it plausibly
rewrites its own source, tagged or not, without copying the prompt or a demonstration."""

from __future__ import annotations

import pytest

from cfaug.llm.errors import ECHO, NOT_A_REWRITE, ParseError
from cfaug.llm.parsers import cut_commentary, echoed_line, get_parser, word_overlap

revised = get_parser("revised_text")

SOURCE = "the service was slow and the food was cold ."
REWRITE = "the service was quick and the food was hot ."


@pytest.mark.parametrize("answer", [
    f"Revised text: {REWRITE}\nNote: I changed two words.",
    f"Revised text: {REWRITE}\nI changed slow to quick and cold to hot.",
    f"**Revised text:** {REWRITE}\n\nExplanation: the adjectives now praise the place.",
    f"{REWRITE}\n\nExplanation: I replaced the negative adjectives with positive ones, which flips the text.",
    f"{REWRITE}\nNote: this keeps the rest of the sentence.",
    f"{REWRITE}\n\nThis revision changes the sentiment by swapping two adjectives.",
    f"{REWRITE}\n(Note: two words were changed.)",
    f"{REWRITE} (I changed 'slow' to 'quick'.)",
    f"<revised>{REWRITE}\nNote: I changed two words.</revised>",
    f"<revised>{REWRITE}</revised>\nNote: I changed two words, slow and cold, to make it positive.",
    f"Here is the revised text:\n<revised>{REWRITE}</revised>\n\nChanges made: slow -> quick, cold -> hot.",
    f"{REWRITE}\n\nChanges made:\n- slow -> quick\n- cold -> hot",
    f"{REWRITE}\n\nBy changing slow to quick, the text becomes positive.",
    f"{REWRITE}\nLet me know if you want another version.",
])
def test_only_the_rewrite_is_taken_never_the_commentary(answer):
    assert revised(answer, source=SOURCE) == REWRITE


def test_a_cut_is_noted():
    parsed = revised.read(f"{REWRITE}\n\nExplanation: two adjectives.", source=SOURCE)
    assert parsed.value == REWRITE and parsed.notes["commentary_cut"] is True and parsed.notes["format"] == "untagged"


def test_a_multi_line_rewrite_without_commentary_is_kept_whole():
    source = "The food was cold.\nThe staff was rude."
    answer = "The food was hot.\nThe staff was kind."
    assert revised(answer, source=source) == answer
    assert cut_commentary(answer) == (answer, False)


@pytest.mark.parametrize("answer", [
    "<revised>A clever script, sharp dialogue and a twist I did not see coming.</revised>",  # a demo's output
    "<revised>The battery lasts two full days and charges fast.</revised>",
    "<revised>Great.</revised>",  # far shorter than its source
    "<revised>" + " ".join([REWRITE] * 3) + "</revised>",  # far longer
])
def test_a_tagged_answer_must_read_as_a_rewrite_of_its_own_source(answer):
    with pytest.raises(ParseError) as exc:
        revised(answer, source=SOURCE)
    assert exc.value.kind == NOT_A_REWRITE and "between its tags" in exc.value.reason


def test_a_tagged_rewrite_of_its_source_keeps_no_notes():
    assert revised.read(f"<revised>{REWRITE}</revised>", source=SOURCE).notes == {}


def test_other_forms_of_a_word_count_as_kept():
    assert word_overlap("A woman is sleeping.", "A man sleeps.") == pytest.approx(2 / 3)
    assert revised("<hypothesis>A woman is sleeping.</hypothesis>", tag="hypothesis", source="A man sleeps.")


PROMPT = """You edit texts so that their sentiment changes.
Examples:
Text: the popcorn was stale and the seats were sticky .
Revised: the popcorn was fresh and the seats were clean .
Text: my jack and coke was seriously lacking .
Target sentiment: positive
Reply with the revised text only, between <revised> and </revised>."""
JACK = "my jack and coke was seriously lacking ."


COPIES = [
    ("<revised>the popcorn was fresh and the seats were clean .</revised>", "Revised: the popcorn"),
    ("<revised>The popcorn was fresh, and the seats were clean!</revised>", "Revised: the popcorn"),
    ("<revised>the popcorn was fresh and the seats were very clean</revised>", "Revised: the popcorn"),
    ("Reply with the revised text only, between", "Reply with the revised"),
]


@pytest.mark.parametrize("answer, copied", COPIES)
def test_a_copy_of_the_prompt_or_a_demonstration_is_refused(answer, copied):
    # with no source to compare with (a prompt that states what to write), the copy check refuses it
    with pytest.raises(ParseError) as exc:
        revised(answer, prompt_text=PROMPT)
    assert exc.value.kind == ECHO and copied in exc.value.reason
    # with its source, it is no rewrite of it either way
    with pytest.raises(ParseError) as exc:
        revised(answer, source=JACK, prompt_text=PROMPT)
    assert exc.value.kind in (ECHO, NOT_A_REWRITE)


def test_the_source_and_drafts_of_its_rewrite_in_the_prompt_are_no_copy():
    rewrite = "my jack and coke was seriously great ."
    assert revised(f"<revised>{rewrite}</revised>", source=JACK, prompt_text=PROMPT) == rewrite
    # Self-Refine shows the previous draft; giving it back unchanged is a rewrite, not an echo
    refine = PROMPT + f"\nPrevious revision: {rewrite}\nFeedback: fine."
    assert revised(f"<revised>{rewrite}</revised>", source=JACK, prompt_text=refine) == rewrite
    assert echoed_line(JACK, PROMPT, JACK) is None


def test_a_short_phrase_of_the_prompt_is_no_copy():
    assert echoed_line("the seats", PROMPT) is None  # under the minimum run of words


def test_a_draft_of_a_freer_rewrite_is_no_copy_within_the_tasks_bounds():
    """Style transfer rewords more (a quarter of the words kept); its drafts in a comparison prompt are drafts."""
    source = "I regret that I cannot attend the meeting."
    draft = "cant make the meeting, sorry"
    prompt = f"Text: {source}\nRevised text 1: {draft}\nRevised text 2: I cannot attend the meeting, sorry."
    assert revised(f"<revised>{draft}</revised>", source=source, prompt_text=prompt, min_word_overlap=0.25) == draft
