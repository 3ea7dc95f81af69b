"""The vote cache: an ensemble reads each voter's top words back instead of explaining a text again, with
the same answers; anything the answer depends on is in the key; an unusable cache costs speed, not the run."""

from __future__ import annotations

import multiprocessing
import pickle

import numpy as np
import pytest

from cfaug.importance import Ensemble
from cfaug.importance.cache import VoteCache, default_vote_cache_dir, models_scope, vote_key
from cfaug.importance.words import WordImportance, WordScores

TABLE = {"m1": {"great": 2.0, "nolan": 1.0}, "m2": {"great": 2.0, "plot": 1.0, "awful": 3.0}}


class Counting(WordImportance):
    """Ranks words by a fixed table per model; counts the texts it was asked to explain."""

    def __init__(self, name: str, samples: int = 10) -> None:
        self.name, self.samples, self.asked = name, samples, []

    def explain(self, model, texts, columns, seed=0):
        self.asked += list(texts)
        return [WordScores(t.split(), np.array([TABLE[model.name].get(w, 0.0) * (1 + seed) for w in t.split()]))
                for t in texts]

    def describe(self):
        return {"method": self.name, "samples": self.samples}


class M:
    labels = ("negative", "positive")

    def __init__(self, name: str) -> None:
        self.name = name


TEXTS = ["great nolan plot", "awful plot", "great great plot"]
LABELS = ["positive", "negative", "positive"]


def ensemble(cache, seed=0, samples=10):
    meth = Counting("x", samples)
    return Ensemble({n: M(n) for n in TABLE}, [meth], k=2, seed=seed, cache=cache), meth


def test_a_second_ensemble_reads_the_top_words_back_with_the_same_answers(tmp_path):
    plain, _ = ensemble(None)
    expected = plain.top_words(TEXTS, LABELS)
    first, meth1 = ensemble(VoteCache(tmp_path, "scope"))
    assert first.top_words(TEXTS, LABELS) == expected and len(meth1.asked) == 6
    second, meth2 = ensemble(VoteCache(tmp_path, "scope"))
    assert second.top_words(TEXTS, LABELS) == expected  # voter order kept too
    assert [list(t) for t in second.top_words(TEXTS, LABELS)] == [list(t) for t in expected]
    assert meth2.asked == [] and second.cache.hits == 12 and second.cache.misses == 0
    # a batch mixing known and new texts explains only the new ones
    mixed, meth3 = ensemble(VoteCache(tmp_path, "scope"))
    got = mixed.top_words(["awful plot", "nolan nolan great"], ["negative", "positive"])
    assert meth3.asked == ["nolan nolan great"] * 2 and got[0] == expected[1]


@pytest.mark.parametrize("change", ["seed", "samples", "label", "scope"])
def test_what_the_answer_depends_on_is_in_the_key(tmp_path, change):
    base, _ = ensemble(VoteCache(tmp_path, "scope"))
    base.top_words(TEXTS, LABELS)
    kw = {"seed": {"seed": 1}, "samples": {"samples": 11}}.get(change, {})
    other, meth = ensemble(VoteCache(tmp_path, "other" if change == "scope" else "scope"), **kw)
    labels = ["negative", "positive", "negative"] if change == "label" else LABELS
    other.top_words(TEXTS, labels)
    assert len(meth.asked) == 6
    assert vote_key("m/x", {"a": 1}, 5, 0, "positive", "t") != vote_key("m/x", {"a": 1}, 4, 0, "positive", "t")


def test_an_unusable_cache_is_reported_once_and_the_run_goes_on(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    ens, meth = ensemble(VoteCache(blocker, "scope"))
    plain, _ = ensemble(None)
    assert ens.top_words(TEXTS, LABELS) == plain.top_words(TEXTS, LABELS)
    assert ens.top_words(TEXTS, LABELS) == plain.top_words(TEXTS, LABELS)
    assert capsys.readouterr().err.count("importance cache") == 1 and len(meth.asked) == 12
    with pytest.raises(ValueError, match="plain name"):
        VoteCache(tmp_path, "a/b")


def _child_writes(cache: VoteCache) -> None:
    cache.put({"k-child": ["from", "child"]})


def test_a_forked_or_pickled_worker_opens_its_own_connection(tmp_path):
    cache = VoteCache(tmp_path, "scope")
    cache.put({"k-parent": ["parent"]})  # the parent's connection is open before the fork
    clone = pickle.loads(pickle.dumps(cache))
    assert clone._conn is None and clone.get(["k-parent"]) == {"k-parent": ["parent"]}
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    p = ctx.Process(target=_child_writes, args=(cache,))
    p.start()
    p.join(30)
    assert p.exitcode == 0
    assert cache.get(["k-child", "k-parent"]) == {"k-child": ["from", "child"], "k-parent": ["parent"]}


def test_the_scope_follows_the_model_files_and_the_folder_follows_the_environment(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "w.bin").write_bytes(b"1")
    before = models_scope(tmp_path / "models")
    assert models_scope(tmp_path / "models") == before
    (tmp_path / "models" / "w.bin").write_bytes(b"2")
    assert models_scope(tmp_path / "models") != before
    monkeypatch.setenv("CFAUG_IMPORTANCE_CACHE", str(tmp_path / "votes"))
    assert default_vote_cache_dir() == tmp_path / "votes"
    monkeypatch.delenv("CFAUG_IMPORTANCE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_vote_cache_dir() == tmp_path / "xdg" / "cfaug" / "importance"
