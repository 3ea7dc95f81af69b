import re
from pathlib import Path

import pytest

import cfaug
from cfaug.device import resolve_device
from cfaug.local_models import ModelPathError, default_encoder_path, quiet_transformers, resolve_local_model


@pytest.mark.parametrize("name", ["bert-base-uncased", "distilroberta-base", "sentence-transformers/all-MiniLM-L6-v2"])
def test_hub_names_get_an_offline_explanation(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelPathError) as err:
        resolve_local_model(name, "classifier")
    msg = str(err.value)
    assert msg.startswith(f"classifier '{name}' is not a local folder.")
    assert "does not download models" in msg and "pass the local folder" in msg


def test_a_missing_local_path_is_not_called_a_hub_name(tmp_path):
    with pytest.raises(ModelPathError) as err:
        resolve_local_model(tmp_path / "nope", "masked language model")
    assert str(err.value) == f"masked language model '{tmp_path / 'nope'}' is not a local folder."


def test_a_file_is_not_a_model_folder(tmp_path):
    f = tmp_path / "model.safetensors"
    f.write_bytes(b"")
    with pytest.raises(ModelPathError, match="is a file; pass the folder that holds config.json"):
        resolve_local_model(f)


def test_an_existing_folder_is_returned(tmp_path):
    assert resolve_local_model(str(tmp_path)) == tmp_path


def test_packaged_encoder_and_device():
    assert (default_encoder_path() / "config.json").exists()
    assert resolve_device("cpu") == "cpu"
    assert resolve_device() in ("cpu", "cuda")


# --- transformers' own progress bars ("Loading weights") stay silent whenever cfaug loads a model ---------

SRC = Path(cfaug.__file__).parent
#: modules that load a transformers model but are edited elsewhere; each should call quiet_transformers()


@pytest.fixture
def bars_on():
    """transformers' progress bars switched on (whatever an earlier test or import left), as in a fresh
    process."""
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()
    yield
    hf_logging.enable_progress_bar()


def _load_classifier_judge(tiny_classifier_dir, tiny_mlm_dir):
    from cfaug.judges.classifier import HFClassifierJudge

    return HFClassifierJudge(tiny_classifier_dir)


def _load_masked_lm_proposer(tiny_classifier_dir, tiny_mlm_dir):
    from cfaug.editing.lexicon import load_lexicon
    from cfaug.proposers.replacements import MaskedLMProposer

    return MaskedLMProposer(tiny_mlm_dir, load_lexicon())


def _load_token_encoder(tiny_classifier_dir, tiny_mlm_dir):
    from cfaug.judges.token_embeddings import TokenEncoder

    return TokenEncoder(tiny_mlm_dir)


def _load_masked_lm_scorer(tiny_classifier_dir, tiny_mlm_dir):
    from cfaug.evaluate.bias import MaskedLMScorer

    return MaskedLMScorer(tiny_mlm_dir)


def _load_sentence_encoder(tiny_classifier_dir, tiny_mlm_dir):
    from cfaug.judges.similarity import SentenceEncoder

    return SentenceEncoder()  # the packaged MiniLM


@pytest.mark.parametrize("load", [_load_classifier_judge, _load_masked_lm_proposer, _load_token_encoder,
                                  _load_masked_lm_scorer, _load_sentence_encoder],
                         ids=lambda f: f.__name__[6:])
def test_loading_a_model_prints_no_transformers_progress_bar(load, bars_on, capfd, tiny_classifier_dir,
                                                             tiny_mlm_dir):
    capfd.readouterr()
    assert load(tiny_classifier_dir, tiny_mlm_dir) is not None
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "it/s]" not in err, err


def test_quiet_transformers_switches_the_bars_off(bars_on):
    from transformers.utils import logging as hf_logging

    quiet_transformers()
    assert not hf_logging.is_progress_bar_enabled()


def test_every_module_loading_a_transformers_model_silences_its_bars():
    """A source check for the loaders the test above does not build (fine-tuned classifiers, causal LMs)."""
    loaders = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
               if re.search(r"\.from_pretrained\(|SentenceTransformer\(", p.read_text(encoding="utf-8"))}
    quiet = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
             if "quiet_transformers()" in p.read_text(encoding="utf-8")}
    assert loaders, "no loader found: the pattern is out of date"
    loud = sorted(loaders - quiet)
    assert not loud, f"modules loading models without quiet_transformers(): {loud}"
