"""Shared fixtures of the auto-CAD tests."""

import pytest


@pytest.fixture
def tiny_auto_cad(tmp_path):
    """``fit(**params)``: auto-CAD fitted on eight short reviews (four of each label) with ``params``
    (``require_flip=False`` and ``folds=2`` unless given), and the sentiment task."""
    from cfaug.data.records import Record
    from cfaug.data.tasks import make_task
    from cfaug.methods.auto_cad import AutoCAD, AutoCADConfig
    from cfaug.training.context import FitContext, StageContext

    def fit(**params):
        task = make_task("sentiment")
        pos = ["This was a great film.", "I loved the cast.", "A wonderful, moving story.", "The ending is brilliant."]
        neg = ["This was an awful film.", "I hated the cast.", "A boring, dull story.", "The ending is terrible."]
        records = [Record(f"p{i}", {"text": t}, "positive") for i, t in enumerate(pos)]
        records += [Record(f"n{i}", {"text": t}, "negative") for i, t in enumerate(neg)]
        m = AutoCAD(AutoCADConfig(**{"require_flip": False, "folds": 2, **params}), seed=0)
        m.fit(records, task, FitContext(artifact_dir=tmp_path, progress=False))
        m.load(tmp_path, task, StageContext(progress=False))
        return m, task

    return fit
