"""Which GGUF models count as small models run here (zero-shot's ``prompt_set=auto`` gives them the completion-style
prompt): a packaged name or a ``.gguf`` path whose file is at most ``SMALL_MODEL_BYTES``, never a model served at a
base URL, never a file that cannot be read."""

from __future__ import annotations

import os
import struct
from dataclasses import replace
from pathlib import Path

import pytest

from cfaug.llm.gguf_models import SMALL_MODEL_BYTES, small_local_model


def write_gguf(path: Path, size: int | None = None) -> Path:
    """A valid header-only GGUF file (version 3, one key: the architecture); ``size``: made that many bytes
    long with a sparse tail (no disk used)."""
    def string(s: str) -> bytes:
        data = s.encode("utf-8")
        return struct.pack("<Q", len(data)) + data

    pair = string("general.architecture") + struct.pack("<I", 8) + string("llama")
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pair + b"\0" * 64)
    if size is not None:
        os.truncate(path, size)
    return path


def test_a_small_gguf_file_is_a_small_local_model(tmp_path):
    path = write_gguf(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf")
    assert small_local_model(str(path)) is True


def test_the_size_bound_is_the_files_size(tmp_path):
    at = write_gguf(tmp_path / "at.gguf", SMALL_MODEL_BYTES)
    over = write_gguf(tmp_path / "over.gguf", SMALL_MODEL_BYTES + 1)
    big = write_gguf(tmp_path / "llama-7b.Q4_K_M.gguf", 4 * 2 ** 30)
    assert SMALL_MODEL_BYTES == 700 * 2 ** 20
    assert small_local_model(str(at)) is True
    assert small_local_model(str(over)) is False and small_local_model(str(big)) is False
    assert over.stat().st_size == SMALL_MODEL_BYTES + 1  # the test's own check: the sparse file has that size


def test_a_model_served_at_a_base_url_or_not_a_gguf_model_is_not_a_small_local_model(tmp_path):
    path = write_gguf(tmp_path / "tiny.gguf")
    assert small_local_model(str(path), "http://localhost:8080/v1") is False
    assert small_local_model("gpt-4o-mini") is False
    assert small_local_model(None) is False and small_local_model("") is False
    assert small_local_model("smollm2-135m-instruct", "http://localhost:8000/v1") is False


def test_a_file_that_cannot_be_read_as_gguf_is_not_small(tmp_path):
    (tmp_path / "weights.gguf").write_bytes(b"PK\x03\x04 a zip file, not GGUF")
    (tmp_path / "cut.gguf").write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 5))  # five keys announced, none there
    assert small_local_model(str(tmp_path / "weights.gguf")) is False
    assert small_local_model(str(tmp_path / "cut.gguf")) is False
    assert small_local_model(str(tmp_path / "missing.gguf")) is False


def test_a_packaged_name_answers_as_its_file_does(tmp_path, monkeypatch):
    from cfaug.packaged_models import PACKAGED

    packaged = PACKAGED["smollm2-135m-instruct"]
    small = write_gguf(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf")
    monkeypatch.setitem(PACKAGED, packaged.name, replace(packaged, find=lambda assemble=True: small))
    assert small_local_model("smollm2-135m-instruct") is True
    assert small_local_model(str(small)) is True  # the same file by its path: the same answer
    monkeypatch.setitem(PACKAGED, packaged.name, replace(packaged, find=lambda assemble=True: None))
    assert small_local_model("smollm2-135m-instruct") is False  # not installed: nothing to read


@pytest.mark.parametrize("size,prompt", [(None, "zero-shot-sentiment-small"), (2 * 2 ** 30, "zero-shot-sentiment")])
def test_zero_shot_auto_prompt_set_follows_the_files_size(tmp_path, size, prompt):
    from cfaug.data.tasks import make_task
    from cfaug.methods.zero_shot import ZeroShot

    path = write_gguf(tmp_path / "model.gguf", size)
    method = ZeroShot(ZeroShot.Config(llm={"model": str(path)}))
    assert method.prompt_name(make_task("sentiment")) == prompt


@pytest.mark.parametrize("size,prompt", [(None, "few-shot-sentiment-small"), (2 * 2 ** 30, "few-shot-sentiment")])
def test_strategies_auto_prompt_set_follows_the_file_too(tmp_path, size, prompt):
    from cfaug.data.tasks import make_task
    from cfaug.methods.compare_generate.few_shot import FewShot

    path = write_gguf(tmp_path / "model.gguf", size)
    method = FewShot(FewShot.Config(llm={"model": str(path)}))
    assert method.prompt_set == ("small" if size is None else "default")
    assert method.prompt_name("few-shot", make_task("sentiment")) == prompt
    served = FewShot(FewShot.Config(llm={"model": str(path), "base_url": "http://127.0.0.1:9/v1"}))
    assert served.prompt_set == "default"  # a model served elsewhere is not read here
