"""The output contract under every answer shape, for the prompting methods: a row is written only when its
text differs from its source in words, and it holds nothing but the rewrite the answer gave (no note, no
explanation, no copy of the prompt or of a demonstration), whole.

The property test draws random source texts (some with HTML markup and escapable characters, some holding
the tags the answer is read by) and, for each, a random answer shape from a seeded generator; the scripted
server records which rewrite (if any) each answer holds, and the run's rows are checked against that record.
The flip check is off, so the same-words guard stands on its own: an answer that only escapes the source's
HTML, drops its markup or lower-cases it without punctuation is no rewrite."""

from __future__ import annotations

import html
import json
import random
import re
from typing import Any

import pytest

from cfaug.api import run_augment
from cfaug.nlp.surface import in_surface_of
from cfaug.nlp.tokens import same_words, word_sequence

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

pytestmark = pytest.mark.usefixtures("isolated_llm_cache")

FLIP = {"good": "bad", "great": "awful", "friendly": "rude", "fresh": "stale", "quick": "slow", "clean": "dirty",
        "loved": "hated", "tasty": "bland", "cheap": "pricey", "warm": "cold"}
NOUNS = ["food", "staff", "room", "pizza", "service", "coffee", "waiter", "menu", "patio", "bread"]
FILLER = ["the", "was", "really", "and", "our", "it", "'s", "very", "at", "this", "place", "today", "n't"]


#: what a source may hold besides words: markup and characters HTML escapes, or the tags the answer is read by
EXTRAS = ["<br /><br />", "&", "haven't", "</revised>", "<revised>", "</think>"]


def random_source(rng: random.Random) -> str:
    words = [rng.choice(FILLER) for _ in range(rng.randint(3, 9))]
    for _ in range(rng.randint(1, 2)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(list(FLIP)))
    words.insert(rng.randrange(len(words) + 1), rng.choice(NOUNS))
    if rng.random() < 0.5:
        words.insert(rng.randrange(1, len(words)), rng.choice(EXTRAS))
    return " ".join(words) + rng.choice([" .", " !", "."])


def flipped(text: str) -> str:
    return re.sub(r"\w+", lambda m: FLIP.get(m.group(0), m.group(0)), text)


def unpunctuated(text: str, fill: str) -> str:
    """``text`` lower-cased, each punctuation mark replaced by ``fill``."""
    return re.sub(r"[^\w\s]", fill, text.lower())


def prompt_source(prompt: str) -> str:
    """The text a zero-shot or few-shot prompt asks to rewrite (the last ``Text:`` of the prompt)."""
    tail = prompt.rsplit("Text:", 1)[1]
    return tail.split("\n\n", 1)[0].split("\nCurrent sentiment:", 1)[0].split("\nTarget sentiment:", 1)[0].strip()


def demo_outputs(prompt: str) -> list[str]:
    return re.findall(r"Revised text: <revised>(.*?)</revised>", prompt)


#: each shape: (answer, the rewrite it holds or None when it holds none that may be written)
def shapes(source: str, prompt: str) -> list[tuple[str, str | None]]:
    rewrite = flipped(source)
    detokenized = source.capitalize().replace(" n't", "n\u2019t").replace(" 's", "\u2019s")
    demos = demo_outputs(prompt) or ["A clever script, sharp dialogue and a twist I did not see coming."]
    return [
        (f"<revised>{rewrite}</revised>", rewrite),
        (f"Revised text: {rewrite}\nNote: I changed the opinion words.", rewrite),
        (f"<revised>{rewrite}</revised>\n\nExplanation: the adjectives now carry the other sentiment.", rewrite),
        (f"{rewrite}\n\nExplanation: I replaced every opinion word with its opposite.", rewrite),
        (f"{rewrite}\nI changed the adjectives to their opposites.", rewrite),
        (f"<revised>{source.rstrip(' .!')}</revised>", None),  # punctuation only
        (f"<revised>{detokenized}</revised>", None),  # re-cased and detokenized
        (f"<revised>{source.upper()}!!</revised>", None),
        (f"<revised>{html.escape(source)}</revised>", None),  # HTML-escaped
        (f"<revised>{source.replace('<br />', '')}</revised>", None),  # markup dropped
        (f"<revised>{unpunctuated(source, '')}</revised>", None),  # lower-cased, punctuation dropped
        (f"<revised>{unpunctuated(source, ' ')}</revised>", None),  # ... or spaced out
        (f"<revised>{demos[0]}</revised>", None),  # a demonstration's output copied
        ("Reply with the revised text only, between <revised> and", None),  # the prompt echoed
        ("Sure! I can rewrite that for you.", None),
        ("<revised></revised>", None),
        ("<revised>The battery lasts two full days and charges in an hour.</revised>", None),  # another text
    ]


class Script:
    """Answers each prompt with a shape drawn by a generator seeded with the text, and records it."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.allowed: dict[str, str | None] = {}

    def __call__(self, body: dict[str, Any], prompt: str) -> str:
        source = prompt_source(prompt)
        options = shapes(source, prompt)
        answer, rewrite = random.Random(f"{self.seed}:{source}").choice(options)
        self.allowed[source] = rewrite
        return answer


@pytest.mark.parametrize("method", ["zero-shot", "few-shot"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_row_is_unchanged_or_holds_anything_but_the_rewrite(tmp_path, method, seed):
    rng = random.Random(seed)
    texts = list(dict.fromkeys(random_source(rng) for _ in range(40)))
    data = [{"text": t, "label": "positive"} for t in texts]
    script = Script(seed)
    with FakeLLM(default_reply=script) as srv:
        llm = {"base_url": srv.base_url, "model": "m", "retry_base_delay": 0.01, "cache_dir": str(tmp_path / "c")}
        summary, rows = run_augment(data, method, run_dir=tmp_path / "run", progress=False,
                                    params={"llm": llm, "parse_retries": 0, "flip_check": "none"})
    assert set(script.allowed) == set(texts)
    for row in rows:
        source = row["original_text"]
        assert not same_words(row["text"], source), (source, row["text"])
        # the rewrite the answer gave, whole, in its source's case and tokenization (nothing else changed)
        assert script.allowed[source] is not None and row["text"] == in_surface_of(source, script.allowed[source]), \
            (source, row["text"], script.allowed[source])
        assert word_sequence(row["text"]) == word_sequence(script.allowed[source])
    expected = sum(1 for t in texts if script.allowed[t] is not None and not same_words(script.allowed[t], t))
    assert len(rows) == expected > 0
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert all(ln.get("reason") or ln.get("error") for ln in lines if not ln["counterfactuals"])


def test_the_last_guard_drops_an_unchanged_rewrite_for_any_method():
    """``result_line`` drops a counterfactual whose text holds its source's words, whatever method made it."""
    from cfaug.data.records import Counterfactual, Record, WorkItem
    from cfaug.data.schema import Schema
    from cfaug.data.tasks import SentimentTask
    from cfaug.run.results import SAME_WORDS, result_line

    record = Record("1", {"text": "it 's located in a great part of scottsdale ."}, "positive")
    item = WorkItem(record, "negative")
    same = Counterfactual(record, {"text": "It’s located in a great part of Scottsdale"}, "negative", "any")
    other = Counterfactual(record, {"text": "It's located in a dull part of Scottsdale"}, "negative", "any")
    schema = Schema(text_cols={"text": "text"}, label_col="label")
    line = result_line(item, [same], schema, SentimentTask())
    assert line["counterfactuals"] == [] and line["reason"] == SAME_WORDS and line["status"] == "no_counterfactual"
    line = result_line(item, [same, other], schema, SentimentTask())
    assert [r["text"] for r in line["counterfactuals"]] == [other.fields["text"]]


#: each source names its own hotel, so a reply can tell which item a prompt is about
HOLDS_TAGS = ("The staff at the Savoy was friendly and quick and the rooms were clean and bright. </revised> "
              "Also the pool was warm.")
MARKUP = "I haven't seen a hotel like the Ritz.<br /><br />The staff & the rooms were friendly and clean."
ANSWERS = {
    "savoy": f"<revised>{flipped(HOLDS_TAGS)}</revised>",
    "ritz": f"<revised>{html.escape(MARKUP)}</revised>",
    "plaza": "<revised>{}</revised>".format(unpunctuated(MARKUP.replace("Ritz", "Plaza"), "")),
    "regent": "<revised>{}</revised>".format(MARKUP.replace("Ritz", "Regent").replace("<br />", "")),
}
JUDGED = ("Classify the next", "Rate the next text", "Count the next text")


def every_method_reply(body: dict[str, Any], prompt: str) -> str:
    """A judge says negative, feedback asks for the flip, and every rewriting prompt gets its hotel's answer."""
    if any(m in prompt for m in JUDGED):
        return "negative"
    if "Give your feedback" in prompt:
        return "Make every opinion word negative."
    hotel = next(h for h in reversed(ANSWERS) if h in prompt.lower())
    return ANSWERS[hotel]


@pytest.mark.parametrize("method", ["zero-shot", "few-shot", "cot", "self-refine", "opro", "compare-generate",
                                    "lass-pairs"])
def test_every_llm_method_writes_no_echo_and_reads_a_source_with_tags_whole(tmp_path, method):
    data = [{"text": HOLDS_TAGS, "label": "positive"}, {"text": MARKUP, "label": "positive"},
            *({"text": MARKUP.replace("Ritz", h.capitalize()), "label": "positive"} for h in ("plaza", "regent"))]
    with FakeLLM(default_reply=every_method_reply) as srv:
        llm = {"base_url": srv.base_url, "model": "m", "retry_base_delay": 0.01, "cache_dir": str(tmp_path / "c")}
        _, rows = run_augment(data, method, run_dir=tmp_path / "run", progress=False, keep_failed=True,
                              params={"llm": llm, "parse_retries": 0, "flip_check": "none"})
    assert [(r["original_text"], r["text"]) for r in rows] == [(HOLDS_TAGS, flipped(HOLDS_TAGS))]
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(ln["status"] for ln in lines) == ["no_counterfactual"] * 3 + ["ok"]
    assert all(ln["reason"] for ln in lines if ln["status"] == "no_counterfactual")
