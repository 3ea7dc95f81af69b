"""What keeps auto-CAD's training stage quick on a new machine: the lexicon's word vectors come from the copy
shipped with cfaug (the sentence encoder is not loaded), and the classifier C is trained with BLAS on one
thread (many small calls; on several threads it took ten times the CPU time and its last digits depended on
the number of cores)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cfaug.data.io import read_dataset
from cfaug.data.tasks import make_task
from cfaug.classifiers import tfidf_linear as classifier_module
from cfaug.judges.similarity import stored_embeddings
from cfaug.methods.auto_cad import AutoCAD, AutoCADConfig
from cfaug.proposers.replacements import WordVectors
from cfaug.training.context import FitContext


@pytest.fixture(scope="module")
def task():
    return make_task("sentiment")


@pytest.fixture(scope="module")
def records(sentiment_tsv, task):
    return read_dataset(sentiment_tsv, task).records


def fit(records, task, folder):
    folder.mkdir(parents=True)
    m = AutoCAD(AutoCADConfig(classifier_background="none"), seed=0)
    m.fit(records, task, FitContext(artifact_dir=folder, progress=False))
    return m


def test_fit_reads_the_shipped_word_vectors_without_loading_the_encoder(records, task, tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_EMBEDDING_CACHE", str(tmp_path / "empty-cache"))  # a new machine's empty cache
    m = fit(records, task, tmp_path / "artifacts")
    assert m._encoder is None
    words = (tmp_path / "artifacts" / WordVectors.WORDS_FILE).read_text(encoding="utf-8").split()
    vectors = np.load(tmp_path / "artifacts" / WordVectors.VECTORS_FILE)
    assert np.array_equal(vectors, stored_embeddings(words))


def test_the_classifier_is_trained_on_one_blas_thread(records, task, tmp_path, monkeypatch):
    from threadpoolctl import threadpool_info

    seen = []
    original = classifier_module.TfidfLinearJudge.fit

    def recording_fit(self, inputs, labels):
        seen.append({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
        return original(self, inputs, labels)

    monkeypatch.setattr(classifier_module.TfidfLinearJudge, "fit", recording_fit)
    fit(records, task, tmp_path / "a")
    assert seen and all(threads <= {1} for threads in seen)
    # the same data gives the same classifier
    fit(records, task, tmp_path / "b")
    for fold in sorted(p.name for p in (tmp_path / "a").glob("classifier-fold*.pkl")):
        a, b = (pickle.loads((tmp_path / d / fold).read_bytes()) for d in ("a", "b"))
        assert np.array_equal(a._clf.coef_, b._clf.coef_) and np.array_equal(a._clf.intercept_, b._clf.intercept_)
