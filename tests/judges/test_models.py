import pytest

from cfaug.judges.models import ModelPathError, default_encoder_path, resolve_local_model, torch_device


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
    assert torch_device("cpu") == "cpu"
    assert torch_device() in ("cpu", "cuda")
