"""CoBA's LLM path takes nothing on trust: a triple counts only when its words come from the text, a
modification only when it changes a word that carries the label, and a rebuilt text only when it differs
from the source in words and shows the edit. Otherwise the item has no counterfactual, with its reason
counted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.methods.coba.config import (NO_TRIPLE_FROM_TEXT, PRINCIPAL_UNCHANGED, REBUILT_ORIGINAL,
                                       REBUILT_WITHOUT_EDIT)
from cfaug.methods.coba.llm_triples import from_text, label_edit, missing_edits
from cfaug.nlp.tokens import same_words

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

LIGHT = ["-p", "models=tfidf-logreg", "-p", "importance=lime", "-p", "lime_samples=40"]
FLIP = {"wonderful": "awful", "brilliant": "dull", "great": "poor", "excellent": "poor", "beautiful": "ugly",
        "loved": "hated", "charming": "tiresome"}


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))


def positives(sentiment_tsv: Path, tmp_path: Path, n: int = 3) -> tuple[Path, list[str]]:
    rows = sentiment_tsv.read_text(encoding="utf-8").splitlines()
    keep = [r for r in rows[1:] if "\tPositive\t" in r][:n] + [r for r in rows[1:] if "\tNegative\t" in r][:1]
    inp = tmp_path / "in.tsv"
    inp.write_text("\n".join([rows[0], *keep]) + "\n", encoding="utf-8")
    return inp, [r.split("\t")[-1] for r in keep]


def as_triple(text: str) -> str:
    words = text.strip().rstrip(".").split()
    return f"{words[0]} {words[1]} | {words[2]} | {' '.join(words[3:])}"


def script(extract=None, modify=None, rebuild=None):
    """A server reply: each step answered by the given function, else by a faithful default (extract the
    whole text as one triple; flip its opinion words; state the triples)."""
    def reply(body, prompt):
        if "Break the text below" in prompt:
            text = prompt.rsplit("Text:", 1)[1].strip()
            return extract(text) if extract else f"1. {as_triple(text)}"
        if "Rewrite each of them" in prompt:
            block = prompt.split("Triples:\n", 1)[1].split("\n\nWrite only", 1)[0]
            flipped = re.sub(r"\w+", lambda m: FLIP.get(m.group(0), m.group(0)), block)
            return modify(block) if modify else flipped
        if "Write a text that states" in prompt:
            block = prompt.split("Triples:\n", 1)[1].split("\n\nReply", 1)[0]
            stated = ". ".join(" ".join(x.strip() for x in re.sub(r"^\d+\.\s*", "", line).split("|"))
                               for line in block.splitlines() if "|" in line) + "."
            return rebuild(stated) if rebuild else f"<revised>{stated}</revised>"
        return "OK"

    return reply


def run(inp: Path, out: Path, reply) -> tuple[list[dict], dict]:
    with FakeLLM(default_reply=reply) as srv:
        code = main(["augment", str(inp), "-o", str(out), "--method", "coba", "-p", "mode=llm", *LIGHT,
                     "--llm-base-url", srv.base_url, "--llm-model", "m", "--no-progress", "--seed", "0", "--no-cache"])
    assert code == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if x.strip()]
    summary = json.loads((Path(str(out) + ".run") / "summary.json").read_text())
    return rows, summary


def test_faithful_answers_give_rows_that_show_the_edit(tmp_path, sentiment_tsv):
    inp, texts = positives(sentiment_tsv, tmp_path)
    rows, _ = run(inp, tmp_path / "out.jsonl", script())
    assert rows
    for row in rows:
        assert not same_words(row["Text"], row["original_Text"])
        assert any(new in row["Text"] for new in FLIP.values())


def test_an_extraction_that_echoes_the_prompt_gives_no_triple(tmp_path, sentiment_tsv):
    inp, texts = positives(sentiment_tsv, tmp_path)
    echo = script(extract=lambda text: "1. Reply with the text only | between | <revised> and\n"
                                       "2. The film | is | way too full of itself")
    rows, summary = run(inp, tmp_path / "out.jsonl", echo)
    assert rows == [] and summary["without_reasons"] == {NO_TRIPLE_FROM_TEXT: len(texts)}


@pytest.mark.parametrize("change", [
    lambda block: block.replace(" |", " |").rstrip() + ".",  # a full stop added
    lambda block: block.upper(),  # case only
    lambda block: re.sub(r"\|", " | ", block),  # spacing only
])
def test_a_modification_that_changes_no_label_word_is_no_edit(tmp_path, sentiment_tsv, change):
    inp, texts = positives(sentiment_tsv, tmp_path)
    with FakeLLM(default_reply=script(modify=change)) as srv:
        code = main(["augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--method", "coba", "-p", "mode=llm",
                     *LIGHT, "--llm-base-url", srv.base_url, "--llm-model", "m", "--no-progress"])
        assert code == 0 and srv.count("Write a text that states") == 0
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["counterfactuals_written"] == 0
    assert set(summary["without_reasons"]) <= {PRINCIPAL_UNCHANGED, "no principal triple: nothing in the text's "
                                               "triples carries the label"}
    assert summary["without_reasons"].get(PRINCIPAL_UNCHANGED, 0) >= len(texts) - 1


def test_a_rebuild_that_is_the_original_again_or_lacks_the_edit_is_not_written(tmp_path, sentiment_tsv):
    inp, texts = positives(sentiment_tsv, tmp_path)
    unflip = {v: k for k, v in FLIP.items()}

    def source_of(stated: str) -> str:  # the text whose triple the rebuild prompt states, edits undone
        words = set(re.findall(r"\w+", re.sub(r"\w+", lambda m: unflip.get(m.group(0), m.group(0)), stated)))
        return max(texts, key=lambda t: len(words & set(re.findall(r"\w+", t))))

    others = {PRINCIPAL_UNCHANGED, "no principal triple: nothing in the text's triples carries the label"}
    rows, summary = run(inp, tmp_path / "a.jsonl", script(rebuild=lambda s: f"<revised>{source_of(s)} !</revised>"))
    assert rows == [] and REBUILT_ORIGINAL in summary["without_reasons"]
    assert set(summary["without_reasons"]) <= {REBUILT_ORIGINAL, *others}

    def unrelated_change(stated: str) -> str:  # another word changed, not the one the edit brought in
        return "<revised>" + source_of(stated).replace(" a ", " one ").replace("The ", "This ") + "</revised>"

    rows, summary = run(inp, tmp_path / "b.jsonl", script(rebuild=unrelated_change))
    assert rows == [] and REBUILT_WITHOUT_EDIT in summary["without_reasons"]
    assert set(summary["without_reasons"]) <= {REBUILT_WITHOUT_EDIT, REBUILT_ORIGINAL, *others}  # (no " a " or "The ")


def test_the_checks_one_by_one():
    text = "The acting is excellent and the story is beautiful."
    assert from_text([("The acting", "is", "excellent")], text) == [("The acting", "is", "excellent")]
    assert from_text([("the story", "was", "beautifully told")], text)  # other forms of the same words
    assert from_text([("Reply", "with the text only", "between and")], text) == []
    principal = {"excellent", "beautiful"}
    assert not label_edit(("The acting", "is", "excellent"), ("the acting", "is", "excellent."), principal)
    assert not label_edit(("The acting", "is", "excellent"), ("The acting", "was", "excellent"), principal)
    assert label_edit(("The acting", "is", "excellent"), ("The acting", "is", "poor"), principal)
    assert label_edit(("The acting", "is", "excellent"), ("The acting", "is not", "excellent"), principal)
    before, after = [("The acting", "is", "excellent")], [("The acting", "is", "poor")]
    assert missing_edits("The acting is poor.", before, after, [0]) == []
    assert missing_edits("The acting is excellent !", before, after, [0]) == [0]


def test_a_rebuild_that_only_adds_markup_to_the_original_is_not_written(tmp_path, sentiment_tsv):
    inp, texts = positives(sentiment_tsv, tmp_path)

    def with_markup(stated: str) -> str:  # the original back, with a line break of HTML in it
        words = set(re.findall(r"\w+", stated.lower()))
        source = max(texts, key=lambda t: len(words & set(re.findall(r"\w+", t.lower()))))
        head, tail = source.split(" ", 1)
        return f"<revised>{head}<br /><br />{tail}</revised>"

    rows, summary = run(inp, tmp_path / "out.jsonl", script(rebuild=with_markup))
    assert rows == [] and REBUILT_ORIGINAL in summary["without_reasons"]


def test_a_rebuilt_text_that_keeps_the_tags_of_its_triples_is_read_whole(tmp_path, sentiment_tsv):
    inp, texts = positives(sentiment_tsv, tmp_path)
    first = texts[0]
    held = first.replace(" with ", " </revised> with ", 1)
    assert held != first
    inp.write_text(inp.read_text(encoding="utf-8").replace(first, held), encoding="utf-8")
    rows, _ = run(inp, tmp_path / "out.jsonl", script())
    [row] = [r for r in rows if r["original_Text"] == held]
    assert "</revised> with" in row["Text"] and row["Text"].endswith(".")
    assert len(row["Text"].split()) >= len(held.split()) - 1
