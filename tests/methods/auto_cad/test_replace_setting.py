"""How many of REP-CT's planned edits a rewrite takes (``replace``): all, until C flips, or only the weighed."""

import numpy as np
import pytest

from cfaug.data.records import Record, WorkItem
from cfaug.editing.text import Edit
from cfaug.methods.auto_cad import AutoCADConfig
from cfaug.methods.auto_cad.causal_terms import CausalTerm
from cfaug.methods.auto_cad.planner import EditPlanner

TEXT = "a dull , shrill and cheap film"


class _NeverFlips:
    """A classifier C that never gives the target more than 0.3."""

    labels = ["negative", "positive"]

    def predict_proba(self, texts):
        return np.array([[0.7, 0.3] for _ in texts])


class _FlipsAtSecond(_NeverFlips):
    def predict_proba(self, texts):
        return np.array([[0.7, 0.3], [0.05, 0.95], [0.05, 0.95]][: len(texts)])


def plan():
    """Three replacements: one C weighs (importance 0.5), one it does not (0.0), one against the label."""
    words = [("dull", 2, 0.5), ("shrill", 9, 0.0), ("cheap", 20, -0.1)]
    return [(Edit(start, start + len(w), "fun", w, "replace"), CausalTerm(head=k, phrase=(k,), kind="word",
                                                                         importance=imp))
            for k, (w, start, imp) in enumerate(words)]


def taken(replace, clf):
    planner = EditPlanner(AutoCADConfig(replace=replace), None, None, None, {}, manner=False,
                          similarity=lambda a, b: None)
    item = WorkItem(Record("r0", {"text": TEXT}, "negative"), "positive")
    edits, _ = planner._until_flip(clf, item, plan())
    return [e.old for e in edits]


@pytest.mark.parametrize("replace,never,at_second", [
    ("all", ["dull", "shrill", "cheap"], ["dull", "shrill"]),
    ("until-flip", ["dull", "shrill", "cheap"], ["dull", "shrill"]),
    ("weighed", ["dull"], ["dull"]),  # the words C does not weigh stay, flipped or not
])
def test_how_many_edits_a_rewrite_takes(replace, never, at_second):
    assert taken(replace, _NeverFlips()) == never
    assert taken(replace, _FlipsAtSecond()) == at_second
