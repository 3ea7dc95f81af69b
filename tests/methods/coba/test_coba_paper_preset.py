"""CoBA's ``paper`` preset: the LLM path, the ensemble alone deciding, and the models it needs."""

import pytest

from cfaug.config import ConfigError
from cfaug.methods import build_method


def test_the_paper_preset_needs_fine_tuned_models_by_path():
    with pytest.raises(ConfigError, match=r"preset paper of coba.v1 needs models: the fine-tuned classifiers M"):
        build_method("coba", {}, preset="paper")


def test_the_paper_preset_pins_the_papers_values(tmp_path):
    c = build_method("coba", {"models": f"{tmp_path}/bert,{tmp_path}/roberta"}, preset="paper").config
    assert (c.mode, c.k, c.tau, c.candidates) == ("llm", 5, 0, 1)
    assert not c.lexicon_principal and not c.edit_mixed and not c.require_flip and c.gender_swap
    assert c.spurious_words is None  # the default treats gender words as spurious instead
    default = build_method("coba", {}).config
    assert (default.mode, default.lexicon_principal, default.edit_mixed) == ("offline", True, True)
    assert (default.spurious_words, default.gender_swap) == ("gender", False)
