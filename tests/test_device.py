"""One rule for devices and float precision."""

from __future__ import annotations

import pytest

import cfaug.device as dev


def test_device_names():
    assert dev.resolve_device("cpu") == "cpu"
    assert dev.resolve_device(None) in ("cpu", "cuda")
    with pytest.raises(dev.DeviceError, match="not one of"):
        dev.resolve_device("gpu0")


def test_auto_precision_follows_the_hardware(monkeypatch):
    monkeypatch.setattr(dev, "cpu_has_native_bf16", lambda: True)
    assert dev.resolve_precision("auto", "cpu") == "bfloat16"
    monkeypatch.setattr(dev, "cpu_has_native_bf16", lambda: False)
    assert dev.resolve_precision(None, "cpu") == "float32"
    assert dev.resolve_precision("auto", "mps") == "float32"
    assert dev.resolve_precision("bfloat16", "cpu") == "bfloat16"  # asked for: taken as given
    assert dev.resolve_precision("FLOAT32", "cpu") == "float32"
    with pytest.raises(dev.DeviceError, match="precision 'half'"):
        dev.resolve_precision("half", "cpu")


def test_cpu_flags_are_read(monkeypatch, tmp_path):
    fake = tmp_path / "cpuinfo"
    fake.write_text("processor : 0\nflags : fpu sse avx512f avx512_bf16\n")
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: real_open(fake if f == "/proc/cpuinfo" else f, *a, **k))
    assert dev.cpu_has_native_bf16()
    fake.write_text("processor : 0\nflags : fpu sse avx512f\n")
    assert not dev.cpu_has_native_bf16()
