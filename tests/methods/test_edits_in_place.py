"""Methods that edit a text in place change it only where they edited it: every character outside the edited
spans (whitespace, case, punctuation, HTML, Unicode) comes back byte for byte, on real samples of CAD-IMDB,
Yelp and SST-2 and on texts written to be awkward."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfaug.api import run_augment
from cfaug.cli.demo import sample_path
from cfaug.editing.text import Edit, apply_edits

FIXTURES = Path(__file__).parents[1] / "data" / "fixtures"

#: characters a deletion may tidy next to the span it removed (the junction), and nothing further
JUNCTION = " \t,;:"

AWKWARD = [
    ("positive", "oh , i really loved it .  the staff were great , and friendly !"),
    ("negative", "The food was\tterrible.<br /><br />Cold ,  bland and  overpriced ... never again."),
    ("positive", "A wonderful  café — the crème brûlée was excellent, and the service was friendly.\n\nGreat!"),
    ("negative", "  I hated the ending ; it was dull , slow and boring .  "),
    ("positive", "<br />Brilliant acting<br/>and a beautiful score.<BR />Loved it."),
    ("negative", "« Awful » , says everyone . It's a bad , bad film ... 😞"),
]


def unexplained_changes(original: str, new: str, edits: list[dict]) -> list[str]:
    """Where ``new`` does not keep ``original`` outside the edits: the stretches of ``original`` between the
    edited spans (each span widened over the spaces and separators of its junction, and a removal also over
    the one letter a removed capital hands on) must appear in ``new`` verbatim, in order, the first at its
    start and the last at its end."""
    zones: list[list[int]] = []
    for e in sorted(edits, key=lambda e: e["start"]):
        a, b = e["start"], e["end"]
        while a > 0 and original[a - 1] in JUNCTION:
            a -= 1
        while b < len(original) and original[b] in JUNCTION:
            b += 1
        b = min(len(original), b + (not e["new"]))
        if zones and a <= zones[-1][1]:
            zones[-1][1] = max(zones[-1][1], b)
        else:
            zones.append([a, b])
    kept = [original[lo:hi] for lo, hi in zip([0] + [b for _, b in zones], [a for a, _ in zones] + [len(original)])]
    problems, pos = [], 0
    for k, piece in enumerate(kept):
        if k == 0:
            found = 0 if new.startswith(piece) else -1
        elif k == len(kept) - 1:
            found = len(new) - len(piece) if new.endswith(piece) and len(new) - len(piece) >= pos else -1
        else:
            found = new.find(piece, pos)
        if found < 0:
            problems.append(f"kept text {piece[:60]!r}... not found unchanged after output position {pos}")
            break
        pos = found + len(piece)
    return problems


def write_awkward(path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for label, text in AWKWARD:
            fh.write(json.dumps({"label": label, "text": text}) + "\n")
    return path


SAMPLES = {
    "cad-imdb": (lambda tmp: sample_path(), {"text_col": "Text", "label_col": "Sentiment", "id_col": "id",
                                              "limit": 24}),
    "yelp": (lambda tmp: FIXTURES / "yelp_sample.tsv", {}),
    "sst2": (lambda tmp: FIXTURES / "sst2_sample.tsv", {}),
    "awkward": (lambda tmp: write_awkward(tmp / "awkward.jsonl"), {}),
}

METHODS = {
    "auto-cad": {"classifier_background": "none", "classifier_data": str(FIXTURES / "yelp_sample.tsv"), "folds": 2},
    # the sentences stay in place here (no shuffle, no deletion): CoBA's moves are checked separately below
    "coba": {"models": "tfidf-logreg", "importance": "lime", "lime_samples": 20, "shuffle": False, "delete_prob": 0.0,
             "judge_folds": 2},
}


def original_text(row: dict) -> str:
    return next(v for k, v in row.items() if k.startswith("original_") and k[9:] in ("Text", "text", "sentence"))


def new_text(row: dict) -> str:
    return next(v for k, v in row.items() if k in ("Text", "text", "sentence"))


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_output_equals_input_outside_the_edited_spans(tmp_path, method, sample):
    path, columns = SAMPLES[sample]
    _, rows = run_augment(path(tmp_path), method, run_dir=tmp_path / "run", seed=0, keep_failed=True,
                          progress=False, params=METHODS[method], **columns)
    assert rows, f"{method} wrote nothing for {sample}"
    problems = []
    for row in rows:
        changed = unexplained_changes(original_text(row), new_text(row), row["meta"]["edits"])
        problems += [f"{row['source_id']}: {c}" for c in changed]
    assert not problems, "\n".join(problems[:10])


def test_coba_keeps_each_sentence_and_the_space_between_sentences_when_it_moves_them(tmp_path):
    _, rows = run_augment(FIXTURES / "sentiment.tsv", "coba", run_dir=tmp_path / "run", seed=0, keep_failed=True,
                          progress=False, params={**METHODS["coba"], "shuffle": True, "delete_prob": 0.0})
    assert rows
    for row in rows:
        new, original = new_text(row), original_text(row)
        assert sorted(new) == sorted(apply_edits(original, [Edit(**{**e, "kind": e["kind"]})
                                                            for e in row["meta"]["edits"]])), row["source_id"]


@pytest.mark.parametrize("text,span,expected", [
    ("oh , i should not have asked .", (14, 17), "oh , i should have asked ."),
    ("it was bad , really", (7, 10), "it was , really"),
    ("good , bad , and ugly", (7, 10), "good , and ugly"),
    ("good, bad, and ugly", (6, 9), "good, and ugly"),
    ("a\tvery  good film", (2, 6), "a\tgood film"),
    ("It was great", (7, 12), "It was"),
    ("It was great<br />Next.", (7, 12), "It was<br />Next."),
    ("(very bad) film", (1, 5), "(bad) film"),
    ("great , the film works .", (0, 5), "the film works ."),
])
def test_a_deletion_tidies_only_its_own_junction(text, span, expected):
    s, e = span
    assert apply_edits(text, [Edit(s, e, "", text[s:e], "remove")]) == expected


def test_a_replacement_keeps_odd_spacing_elsewhere():
    text = "the food  was good , the  staff ... rude\t!"
    assert apply_edits(text, [Edit(14, 18, "bad", "good", "replace")]) == "the food  was bad , the  staff ... rude\t!"
