"""The GGUF header reader on files written here: the keys cfaug uses are read, arrays (a vocabulary) are
passed over, and a file that is not GGUF or ends early is refused with its name."""

from __future__ import annotations

import struct

import pytest

from cfaug.llm.gguf import GGUFError, read_metadata


def _string(s: str) -> bytes:
    data = s.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _kv_string(key: str, value: str) -> bytes:
    return _string(key) + struct.pack("<I", 8) + _string(value)


def _kv_u32(key: str, value: int) -> bytes:
    return _string(key) + struct.pack("<I", 4) + struct.pack("<I", value)


def _kv_string_array(key: str, values: list[str]) -> bytes:
    return _string(key) + struct.pack("<IIQ", 9, 8, len(values)) + b"".join(_string(v) for v in values)


def _kv_float_array(key: str, values: list[float]) -> bytes:
    return _string(key) + struct.pack("<IIQ", 9, 6, len(values)) + b"".join(struct.pack("<f", v) for v in values)


def write_gguf(path, pairs: list[bytes], version: int = 3) -> None:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(pairs)) + b"".join(pairs) + b"\0" * 64)


def test_the_keys_cfaug_uses_are_read_and_arrays_skipped(tmp_path):
    path = tmp_path / "m.gguf"
    write_gguf(path, [
        _kv_string("general.architecture", "llama"),
        _kv_string_array("tokenizer.ggml.tokens", ["<s>", "hello", "world"] * 100),
        _kv_float_array("tokenizer.ggml.scores", [0.5] * 300),
        _kv_string("general.name", "Tiny Test"),
        _kv_u32("llama.context_length", 2048),
        _kv_string("tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"),
        _kv_string("general.license", "apache-2.0"),
    ])
    info = read_metadata(path)
    assert (info.architecture, info.name, info.context_length, info.chat_template, info.license) == \
        ("llama", "Tiny Test", 2048, True, "apache-2.0")
    assert info.size == path.stat().st_size


def test_a_base_model_has_no_chat_template_and_an_unknown_context(tmp_path):
    path = tmp_path / "base.gguf"
    write_gguf(path, [_kv_string("general.architecture", "gemma3")])
    info = read_metadata(path)
    assert info.architecture == "gemma3" and not info.chat_template and info.context_length == 0


def test_other_files_are_refused_with_their_name(tmp_path):
    not_gguf = tmp_path / "weights.bin"
    not_gguf.write_bytes(b"PK\x03\x04 a zip file")
    with pytest.raises(GGUFError, match="weights.bin is not a GGUF model file"):
        read_metadata(not_gguf)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 5) + _string("general.architecture")[:6])
    with pytest.raises(GGUFError, match="cut.gguf: damaged GGUF header"):
        read_metadata(cut)
    old = tmp_path / "old.gguf"
    write_gguf(old, [], version=1)
    with pytest.raises(GGUFError, match="version 1 is too old"):
        read_metadata(old)
