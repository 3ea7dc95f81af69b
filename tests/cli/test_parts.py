"""``cfaug parts`` lists every kind of registered part with its parameters."""

from __future__ import annotations

from cfaug.cli import main
from cfaug.cli.parts import KINDS


def test_every_kind_lists_its_parts(capsys):
    assert main(["parts"]) == 0
    out = capsys.readouterr().out
    for kind in KINDS:
        assert f"{kind}:" in out
    for name in ("coba.v1", "lime.v1", "integrated-gradients.v1", "shapley.v1", "cnn.v1", "tfidf-logreg.v1"):
        assert name in out


def test_one_kind_with_parameters(capsys):
    assert main(["parts", "word-importance"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("word-importance:") and "samples = 300" in out and "methods:" not in out
