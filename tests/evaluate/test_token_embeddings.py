import numpy as np
import pytest

from cfaug.judges.token_embeddings import TokenEncoder
from cfaug.local_models import ModelPathError


def test_special_tokens_dropped_and_rows_normalised(tiny_bert):
    enc = TokenEncoder(tiny_bert)
    (vecs,) = enc.encode(["the film was good ."])
    assert vecs.shape == (5, 32)  # five words, no [CLS] / [SEP]
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    d = enc.describe()
    assert d["special_tokens"] == "dropped" and d["max_length"] == 128 and len(d["weights_sha256"]) == 16


def test_hub_name_is_refused():
    with pytest.raises(ModelPathError, match="does not download"):
        TokenEncoder("bert-base/uncased-not-here")
