import pytest

from cfaug.judges import similarity


def test_sentence_encoder_cosine(sentence_encoder):
    a = ["The film was wonderful.", "The film was wonderful."]
    b = ["The film was wonderful.", "The movie was great."]
    same, close = sentence_encoder.cosine(a, b)
    far = sentence_encoder.cosine(["The film was wonderful."], ["Interest rates rose in March."])[0]
    assert same == pytest.approx(1.0, abs=1e-5)
    assert far < close < same
    assert sentence_encoder.encode(["x", "y"]).shape == (2, sentence_encoder.dimension) == (2, 384)
    assert sentence_encoder.encode([]).shape == (0, 384)
    with pytest.raises(ValueError, match="same length"):
        sentence_encoder.cosine(["a"], [])


def test_sentence_encoder_describes_itself(sentence_encoder, encoder_path):
    d = sentence_encoder.describe()
    assert d["encoder"] == str(encoder_path) and len(d["weights_sha256"]) == 16
    assert sentence_encoder.name == f"sentence-embedding:{encoder_path.name}"


def test_sentence_encoder_refuses_hub_names():
    from cfaug.local_models import ModelPathError
    from cfaug.judges.similarity import SentenceEncoder

    with pytest.raises(ModelPathError, match="does not download"):
        SentenceEncoder("sentence-transformers/all-MiniLM-L6-v2")


def test_stored_embeddings_are_read_from_the_cache_folder_without_a_model(tmp_path):
    import numpy as np

    model = tmp_path / "model"  # a stand-in: the key hashes the weights file, nothing loads it
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights")
    cache = tmp_path / "cache"
    cache.mkdir()
    words = ["good", "bad"]
    assert similarity.stored_embeddings(words, model, cache) is None
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(cache / f"{similarity._persistent_key(words, model)}.npy", matrix)
    assert np.array_equal(similarity.stored_embeddings(words, model, cache), matrix)
    assert similarity.stored_embeddings(["good"], model, cache) is None  # another list, another key
    assert similarity.stored_embeddings(words, tmp_path / "no-model", cache) is None


def test_encode_persistent_reads_a_stored_matrix(sentence_encoder, tmp_path):
    import numpy as np

    words = ["splendid", "dreadful"]
    matrix = np.full((2, 384), 0.5, dtype=np.float32)  # not what the model gives: proves it was read
    np.save(tmp_path / f"{similarity._persistent_key(words, sentence_encoder.path)}.npy", matrix)
    assert np.array_equal(sentence_encoder.encode_persistent(words, cache_dir=tmp_path), matrix)


def test_the_shipped_lexicon_vectors_are_the_encoders(sentence_encoder, tmp_path):
    """The opinion lexicon's vectors ship with cfaug under the key of the packaged encoder, and they are what
    that encoder gives (spot check), so a first run loads them instead of encoding 6,786 words."""
    import numpy as np

    from cfaug.editing.lexicon import load_lexicon

    lexicon = load_lexicon()
    words = sorted(lexicon.positive | lexicon.negative)
    shipped = similarity.stored_embeddings(words, sentence_encoder.path, tmp_path)  # empty cache: the shipped copy
    assert shipped is not None and shipped.shape == (len(words), 384) and shipped.dtype == np.float32
    picks = [0, 1, 1000, 2500, 4000, len(words) - 1]
    assert np.allclose(shipped[picks], sentence_encoder.encode([words[i] for i in picks]), atol=1e-5)
