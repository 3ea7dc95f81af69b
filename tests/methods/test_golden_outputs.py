"""Golden outputs: the rows each offline method writes, pinned byte for byte (texts) and to six significant
digits (floats), so that a refactor of the package's internals can be shown to change nothing.

Every case runs a method through the public command line (``cfaug.cli.main``) on small packaged or
synthetic data with a fixed seed, reads the rows it wrote, passes them through :func:`normalise` and
compares them with ``tests/methods/golden/<case>.jsonl`` (see the README there). A missing golden file is a
failure; ``CFAUG_UPDATE_GOLDEN=1`` (re)writes the files instead of comparing::

    CFAUG_UPDATE_GOLDEN=1 python -m pytest tests/methods/test_golden_outputs.py

Only what legitimately varies between runs and machines is normalised away (run ids, timestamps,
durations, temporary paths, the loopback server's port, library versions, host names); texts, labels,
edits, reasons and scores are kept.
"""

from __future__ import annotations

import difflib
import io
import json
import math
import os
import random
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from cfaug_tests_llm_server import (
    FakeLLM,  # tests/llm/server.py, loaded by tests/conftest.py
)

from cfaug.cli import main

GOLDEN = Path(__file__).with_name("golden")
FIXTURES = Path(__file__).parents[1] / "data" / "fixtures"
UPDATE = os.environ.get("CFAUG_UPDATE_GOLDEN", "") not in ("", "0")

# ------------------------------------------------------------------------------------------ normalising

#: keys whose values differ from run to run or machine to machine; their values become "<volatile>"
VOLATILE_KEYS = frozenset({
    "run_id", "run", "timestamp", "time", "created", "created_at", "started", "started_at", "finished",
    "finished_at", "elapsed", "elapsed_s", "duration", "duration_s", "seconds", "wall_s", "latency",
    "latency_s", "hostname", "host", "versions", "version", "python", "platform", "pid",
})
_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")
_TMP = re.compile(r"(?:/private)?/(?:tmp|var/folders)/(?:[^\s\"'/]+/)*")
SIGNIFICANT = 6


def _round(x: float) -> float | str:
    if math.isnan(x) or math.isinf(x):
        return repr(x)
    return float(f"{x:.{SIGNIFICANT}g}")


def normalise(value: Any, roots: tuple[str, ...] = (), key: str | None = None) -> Any:
    """``value`` with what may legitimately vary between runs replaced, recursively.

    - a dict value under a key of :data:`VOLATILE_KEYS` becomes ``"<volatile>"``;
    - floats are rounded to :data:`SIGNIFICANT` (6) significant digits (ints and bools are untouched);
    - in strings, each of ``roots`` (this run's temporary folders) becomes ``<TMP>``, any other path
      under /tmp becomes ``<TMP>`` too, and a loopback ``host:port`` becomes ``<LOOPBACK>``; nothing else in
      a string changes, so texts stay byte-identical. (The folder part of another /tmp path goes, its last
      component stays.)
    """
    if key is not None and key in VOLATILE_KEYS:
        return "<volatile>"
    if isinstance(value, dict):
        return {k: normalise(v, roots, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v, roots) for v in value]
    if isinstance(value, int) or value is None:  # bools are ints
        return value
    if isinstance(value, float):
        return _round(value)
    if isinstance(value, str):
        for root in sorted(roots, key=len, reverse=True):
            value = value.replace(root, "<TMP>")
        value = _TMP.sub("<TMP>/", value)
        return _PORT.sub("<LOOPBACK>", value)
    return value


def canonical(row: Any) -> str:
    """One row as a line of canonical JSON (sorted keys, no ASCII escaping)."""
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def compare_rows(actual: list[Any], expected: list[Any]) -> str | None:
    """``None`` when the two lists of (normalised) rows are equal, else a readable unified diff of their
    canonical JSON lines. Canonical lines are compared, so a float that differs after rounding, a changed
    character of a text, a missing, extra or reordered row all count."""
    a, e = [canonical(r) for r in actual], [canonical(r) for r in expected]
    if a == e:
        return None
    diff = difflib.unified_diff(e, a, "golden", "now", lineterm="", n=0)
    return f"{len(e)} golden rows, {len(a)} rows now:\n" + "\n".join(diff)


def check_golden(case: str, rows: list[dict], roots: tuple[str, ...] = ()) -> None:
    """Compare ``rows`` (normalised here) with ``golden/<case>.jsonl``, or write that file under
    ``CFAUG_UPDATE_GOLDEN=1``."""
    assert rows, f"{case}: the run wrote no rows, nothing to pin"
    rows = [normalise(r, roots) for r in rows]
    path = GOLDEN / f"{case}.jsonl"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text("".join(canonical(r) + "\n" for r in rows), encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"{path} is missing: generate it with CFAUG_UPDATE_GOLDEN=1 python -m pytest {__file__}")
    expected = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    problem = compare_rows(rows, expected)
    assert problem is None, f"{case}: the output differs from {path.name}\n{problem}"


# ------------------------------------------------------------------------------------------------ tools


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module", autouse=True)
def _isolated(tmp_path_factory):
    """Own model store, vote cache and request cache for this module (nothing fitted or cached elsewhere
    is read back), no ambient LLM settings, and one torch thread (as the other method tests use for tiny
    models)."""
    import torch

    d = tmp_path_factory.mktemp("golden-env")
    mp = pytest.MonkeyPatch()
    mp.setenv("CFAUG_MODEL_STORE", str(d / "store"))
    mp.setenv("CFAUG_IMPORTANCE_CACHE", str(d / "votes"))
    mp.setenv("CFAUG_CACHE_DIR", str(d / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        mp.delenv(var, raising=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    mp.undo()


# ------------------------------------------------------------------------------------- the comparison


def test_a_changed_row_is_detected():
    rows = [{"Text": "A dull film.", "Sentiment": "Negative", "meta": {"confidence": 0.912345678, "edits": [1]}},
            {"Text": "A great film.", "Sentiment": "Positive", "meta": {"confidence": 0.5}}]
    golden = [normalise(r) for r in rows]
    assert compare_rows([normalise(r) for r in rows], golden) is None
    # floats agree to six significant digits, whatever lies beyond
    assert compare_rows([normalise({**rows[0], "meta": {**rows[0]["meta"], "confidence": 0.9123457}}), golden[1]],
                        golden) is None
    changed = [dict(rows[0], Text="A dull film!"), rows[1]]  # one character of one text
    problem = compare_rows([normalise(r) for r in changed], golden)
    assert problem and '-{"Sentiment": "Negative", "Text": "A dull film."' in problem and "A dull film!" in problem
    assert compare_rows([normalise({**rows[0], "meta": {**rows[0]["meta"], "confidence": 0.91235}}), golden[1]],
                        golden)
    assert compare_rows(golden[::-1], golden) and compare_rows(golden[:1], golden)
    # what varies between runs is normalised away, and only that
    a = normalise({"run_id": "x1", "path": "/tmp/pytest-of-me/p0/out.jsonl", "url": "http://127.0.0.1:4711/v1",
                   "text": " two  spaces "})
    assert a == {"run_id": "<volatile>", "path": "<TMP>/out.jsonl", "url": "http://<LOOPBACK>/v1",
                 "text": " two  spaces "}


def test_a_missing_golden_file_fails(monkeypatch):
    import _pytest.outcomes

    monkeypatch.setitem(globals(), "UPDATE", False)  # even while the goldens are being written
    with pytest.raises(_pytest.outcomes.Failed, match="is missing"):
        check_golden("no-such-case", [{"text": "x"}])
    assert not (GOLDEN / "no-such-case.jsonl").exists()


# ------------------------------------------------------------------------------------------- auto-CAD


@pytest.fixture(scope="module")
def auto_cad_default(tmp_path_factory):
    """The default method and recipe (TF-IDF classifier C fitted on the input, lexicon proposer, packaged
    sentence encoder) on the 40-row sentiment fixture, as tests/cli/test_augment.py's default run, keeping
    the filtered candidates too."""
    d = tmp_path_factory.mktemp("auto-cad")
    out = d / "out.jsonl"
    code, _, err = cli("augment", FIXTURES / "sentiment.tsv", "-o", out, "--method", "auto-cad",
                       "-p", "min_similarity=0.5", "--seed", "0", "--keep-failed", "--no-progress")
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_auto_cad_default(auto_cad_default):
    rows, roots = auto_cad_default
    check_golden("auto_cad_default", rows, roots)


#: tests/methods/auto_cad/test_auto_cad_paper_path.py's six reviews
PAPER_ROWS = [
    ("p1", "Positive", "A great film with a wonderful cast."),
    ("p2", "Positive", "The film is brilliant and the music is superb."),
    ("p3", "Positive", "A charming film , the story is clever."),
    ("n1", "Negative", "A dull movie with a weak cast."),
    ("n2", "Negative", "The movie is boring and the music is poor."),
    ("n3", "Negative", "A tedious movie , the story is stupid."),
]


@pytest.fixture(scope="module")
def auto_cad_paper(tmp_path_factory, make_tiny_bert):
    """The ``paper`` preset (RM-CT, REP-CT chosen by Eq. 1, synonym set, MoverScore filter) with a tiny random
    masked LM (seed 0), trained with ``cfaug train`` and applied with ``--model``, as
    tests/methods/auto_cad/test_auto_cad_paper_path.py does."""
    d = tmp_path_factory.mktemp("auto-cad-paper")
    mlm = make_tiny_bert(d / "mlm", "mlm", bias={"great": 30.0, "movie": 25.0, "film": 25.0, "story": 24.0,
                                                 "awful": 20.0, "terrible": 10.0})
    data = d / "reviews.tsv"
    data.write_text("id\tSentiment\tText\n" + "".join(f"{i}\t{lab}\t{t}\n" for i, lab, t in PAPER_ROWS),
                    encoding="utf-8")
    model, out = d / "model", d / "cf.jsonl"
    code, _, err = cli("train", "auto-cad", "--train-data", data, "-o", model, "--preset", "paper",
                       "-p", f"mlm={mlm}", "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    code, _, err = cli("augment", data, "-o", out, "--preset", "paper", "-p", f"mlm={mlm}", "--model", model,
                       "--workers", "1", "--keep-failed", "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_auto_cad_paper_preset(auto_cad_paper):
    rows, roots = auto_cad_paper
    check_golden("auto_cad_paper", rows, roots)


# ----------------------------------------------------------------------------------------------- CoBA

#: tests/methods/coba/test_coba.py's fast settings
COBA_FAST = ["-p", "models=tfidf-logreg,cnn", "-p", "classifier_epochs=2", "-p", "lime_samples=60",
             "-p", "shapley_samples=1", "-p", "ig_steps=8"]


@pytest.fixture(scope="module")
def coba_offline(tmp_path_factory):
    """Offline CoBA (the default mode) on the 40-row sentiment fixture with test_coba.py's fast ensemble
    settings and two candidates per item."""
    d = tmp_path_factory.mktemp("coba")
    out = d / "out.jsonl"
    code, _, err = cli("augment", FIXTURES / "sentiment.tsv", "-o", out, "--method", "coba", "--no-progress",
                       *COBA_FAST, "-p", "candidates=2", "--seed", "0", "--keep-failed")
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_coba_offline(coba_offline):
    rows, roots = coba_offline
    check_golden("coba_offline", rows, roots)


# ----------------------------------------------------------------------------------------------- LASS

#: tests/methods/lass/test_lass_method.py's corpus nouns and tiny model
LASS_NOUNS = ["pizza", "soup", "service", "staff", "pasta", "room", "screen", "battery", "keyboard", "price",
              "menu", "view"]
LASS_TINY = ["-p", "embedding_dim=32", "-p", "hidden_size=64", "-p", "latent=32", "-p", "batch_size=24",
             "-p", "lr=0.01", "-p", "anneal_steps=100", "-p", "epochs=120", "-p", "pretrain_epochs=2",
             "-p", "beam=2", "-p", "dev_share=0"]


@pytest.fixture(scope="module")
def lass_rows(tmp_path_factory):
    """``cfaug train lass`` on test_lass_method.py's synthetic 48-sentence corpus and its 24 pairs, then
    ``cfaug augment --method lass`` with beam search (temperature 0), failed candidates kept."""
    d = tmp_path_factory.mktemp("lass")
    rows, pairs = [], []
    for n, w in enumerate(LASS_NOUNS):
        group = f"g{n % 3}"
        for k, (p, q) in enumerate(((f"the {w} was good .", f"the {w} was bad ."),
                                     (f"i loved the {w} .", f"i hated the {w} ."))):
            rows += [f"{w}{k}p\tpositive\t{p}\t{group}", f"{w}{k}n\tnegative\t{q}\t{group}"]
            pairs += [f"{w}{k}\tpositive\t{p}", f"{w}{k}\tnegative\t{q}"]
    corpus = d / "corpus.tsv"
    corpus.write_text("id\tlabel\ttext\tbusiness\n" + "\n".join(rows) + "\n")
    pair_file = d / "pairs.tsv"
    pair_file.write_text("batch_id\tSentiment\tText\n" + "\n".join(pairs) + "\n")
    model, out = d / "model", d / "out.jsonl"
    code, _, err = cli("train", "lass", "--train-data", corpus, "-o", model, "--no-progress", "--seed", "0",
                       "-p", f"pairs={pair_file}", "-p", "group_col=business", *LASS_TINY)
    assert code == 0, err
    code, _, err = cli("augment", corpus, "-o", out, "--method", "lass", "--model", model, "--no-progress",
                       "--seed", "0", "--keep-failed", *LASS_TINY, "-p", "temperature=0")
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_lass_beam(lass_rows):
    rows, roots = lass_rows
    check_golden("lass_beam", rows, roots)


# ------------------------------------------------------------------------------------------------ t2s

T2S_ASPECTS = ["food", "service", "staff", "pizza", "wine", "menu", "waiter", "dessert"]
T2S_POSITIVE = ["great", "good", "friendly", "tasty"]
T2S_NEGATIVE = ["bad", "slow", "rude", "cold"]


def _aste_lines(n: int, seed: int) -> list[str]:
    """tests/methods/t2s/test_t2s_method.py's toy ASTE-Data-V2 lines."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.sample(T2S_ASPECTS, 2)
        pa, pb = rng.choice(["POS", "NEG"]), rng.choice(["POS", "NEG"])
        oa = rng.choice(T2S_POSITIVE if pa == "POS" else T2S_NEGATIVE)
        ob = rng.choice(T2S_POSITIVE if pb == "POS" else T2S_NEGATIVE)
        if rng.random() < 0.6:
            out.append(f"the {a} was {oa} .####[([1], [3], '{pa}')]")
        else:
            out.append(f"the {a} was {oa} but the {b} was {ob} .####[([1], [3], '{pa}'), ([6], [8], '{pb}')]")
    return out


#: test_t2s_method.py's ``_config`` toy settings, as parameters
T2S_TOY = ["-p", "min_confidence=0", "-p", "extractor_epochs=2", "-p", "d_model=32", "-p", "layers=1",
           "-p", "generator_epochs=2", "-p", "mixed_pairs=30", "-p", "discriminator_epochs=1", "-p", "ppo_steps=2",
           "-p", "batch_size=8", "-p", "candidates=3", "-p", "keep=2", "-p", "min_alignment=0",
           "-p", "min_fluency=0", "-p", "max_new_tokens=12"]


@pytest.fixture(scope="module")
def t2s_rows(tmp_path_factory):
    """``cfaug train t2s`` on 40 toy ASTE lines (and 40 unlabeled sentences), then ``cfaug augment`` of the
    six records ``--limit 6`` takes (a seeded sample), failed candidates kept."""
    d = tmp_path_factory.mktemp("t2s")
    train = d / "train.txt"
    train.write_text("\n".join(_aste_lines(40, 0)) + "\n")
    unlabeled = d / "unlabeled.txt"
    unlabeled.write_text("\n".join(x.split("####")[0] for x in _aste_lines(40, 1)) + "\n")
    model, out = d / "model", d / "aug.jsonl"
    params = ["-p", f"unlabeled={unlabeled}", *T2S_TOY]
    code, _, err = cli("train", "t2s", "--task", "aste", "--train-data", train, "-o", model, "--no-progress",
                       "--seed", "0", *params)
    assert code == 0, err
    code, _, err = cli("augment", train, "--task", "aste", "--method", "t2s", "--model", model, "-o", out,
                       "--no-progress", "--limit", "6", "--seed", "0", "--keep-failed", *params)
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_t2s_toy(t2s_rows):
    rows, roots = t2s_rows
    check_golden("t2s_toy", rows, roots)


# ------------------------------------------------------------------------------ zero-shot (loopback LLM)

ZS_SWAPS = {"great": "awful", "moving": "tedious", "dull": "lively", "tired": "fresh", "love": "hate",
            "Boring": "Gripping", "fine": "poor", "warm": "cold"}
ZS_REVIEWS = [("Positive", "A great, moving film."), ("Negative", "A dull and tired plot."),
              ("Positive", "I love this fine, warm story."), ("Negative", "Boring from start to end.")]


def _flip_reply(body, prompt):
    """tests/methods/test_zero_shot.py's model: swaps sentiment words in the text the prompt quotes."""
    text = re.search(r"Text:\n(.*?)\n\n", prompt, re.DOTALL).group(1)
    return "<revised>" + re.sub(r"\w+", lambda m: ZS_SWAPS.get(m.group(0), m.group(0)), text) + "</revised>"


@pytest.fixture(scope="module")
def zero_shot_rows(tmp_path_factory):
    """``--method zero-shot`` on test_zero_shot.py's four reviews against the loopback test server, whose
    answers depend on the prompt alone."""
    d = tmp_path_factory.mktemp("zero-shot")
    inp = d / "reviews.tsv"
    inp.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in ZS_REVIEWS), encoding="utf-8")
    out = d / "out.jsonl"
    with FakeLLM(default_reply=_flip_reply) as srv:
        code, _, err = cli("augment", inp, "-o", out, "--method", "zero-shot", "--llm-base-url", srv.base_url,
                           "--llm-model", "test-model", "--concurrency", "4", "--no-progress", "--seed", "0",
                           "--keep-failed")
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_zero_shot_loopback(zero_shot_rows):
    rows, roots = zero_shot_rows
    check_golden("zero_shot", rows, roots)


# ------------------------------------------------------------------------ Compare&Generate (loopback LLM)

_CG_POSITIVE = ("great", "moving", "lively", "fresh", "love", "Gripping", "fine", "warm")
_CG_NEGATIVE = ("awful", "tedious", "dull", "tired", "hate", "Boring", "poor", "cold")
_CG_FLIP = {**dict(zip(_CG_POSITIVE, _CG_NEGATIVE)), **dict(zip(_CG_NEGATIVE, _CG_POSITIVE))}


def _flip_one(text: str, target: str) -> str:
    """``text`` with its first word of the other polarity than ``target`` flipped (unchanged if none)."""
    source = _CG_POSITIVE if target == "negative" else _CG_NEGATIVE
    words = re.split(r"(\w+)", text)
    for i, w in enumerate(words):
        if w in source:
            words[i] = _CG_FLIP[w]
            break
    return "".join(words)


def _compare_generate_model(body, prompt):
    """A model whose answer depends on the prompt alone (so on neither request order nor concurrency):
    the judge counts opinion words (a tie is positive); the first generations flip one opinion word; each
    comparison step flips one more word of revised text 1, until none is left."""
    if "Classify the next" in prompt:
        text = re.findall(r'^Text: "(.*)"$', prompt, re.MULTILINE)[-1]
        words = re.findall(r"\w+", text)
        neg, pos = sum(w in _CG_NEGATIVE for w in words), sum(w in _CG_POSITIVE for w in words)
        return "negative" if neg > pos else "positive"
    target = re.findall(r"^Target sentiment: (\w+)$", prompt, re.MULTILINE)[-1]  # the examples' come first
    if "Revised text 1:" in prompt:
        best = re.search(r"^Revised text 1: (.*)$", prompt, re.MULTILINE).group(1)
        return f"Analysis: one more word.\n<revised>{_flip_one(best, target)}</revised>"
    text = re.findall(r"^Text: (.*)$", prompt, re.MULTILINE)[-1]
    return f"<revised>{_flip_one(text, target)}</revised>"


@pytest.fixture(scope="module")
def compare_generate_rows(tmp_path_factory):
    """``--method compare-generate`` (default settings: few-shot start, LLM judge, comparison steps) on the
    zero-shot case's four reviews against the loopback server and :func:`_compare_generate_model`; one
    request at a time, so that no answer is read from the request cache in one run and asked in another."""
    d = tmp_path_factory.mktemp("compare-generate")
    inp = d / "reviews.tsv"
    inp.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in ZS_REVIEWS), encoding="utf-8")
    out = d / "out.jsonl"
    with FakeLLM(default_reply=_compare_generate_model) as srv:
        code, _, err = cli("augment", inp, "-o", out, "--method", "compare-generate", "--llm-base-url", srv.base_url,
                           "--llm-model", "test-model", "--concurrency", "1", "--no-progress", "--seed", "0",
                           "--keep-failed")
    assert code == 0, err
    return read_jsonl(out), (str(d),)


def test_compare_generate_loopback(compare_generate_rows):
    rows, roots = compare_generate_rows
    check_golden("compare_generate", rows, roots)
