"""``--device auto|cpu|cuda[:N]``: one rule for every model cfaug loads or trains."""

from __future__ import annotations

import re

from cfaug.config import ConfigError

_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?|mps)$")


class DeviceError(ConfigError):
    """A device was asked for that this machine does not have, or is spelled wrongly."""


def resolve_device(spec: str | None = "auto") -> str:
    """The torch device for ``spec``: ``auto`` (or None) is ``cuda`` when torch sees a GPU, else ``cpu``;
    ``cuda`` / ``cuda:N`` are checked against the GPUs torch sees, with a clear error when absent."""
    spec = (spec or "auto").strip().lower()
    if not _DEVICE.match(spec):
        raise DeviceError(f"device {spec!r} is not one of auto, cpu, cuda, cuda:N, mps")
    if spec == "cpu":
        return "cpu"
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        if spec == "auto":
            return "cpu"
        raise DeviceError(f"device {spec!r} needs torch, which is not installed") from None
    if spec == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if spec == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise DeviceError("device 'mps' was asked for but torch sees no Apple GPU")
        return "mps"
    if not torch.cuda.is_available():
        raise DeviceError(f"device {spec!r} was asked for but torch sees no CUDA GPU on this machine "
                          "(use --device cpu or auto)")
    index = int(spec.split(":")[1]) if ":" in spec else 0
    if index >= torch.cuda.device_count():
        raise DeviceError(f"device {spec!r}: torch sees {torch.cuda.device_count()} GPU(s)")
    return spec


PRECISIONS = ("auto", "float32", "bfloat16")


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX512-BF16 or AMX-BF16, read from
    ``/proc/cpuinfo``). Elsewhere torch emulates bfloat16, which is slower than float32."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def resolve_precision(spec: str | None, device: str) -> str:
    """The float type (``float32`` or ``bfloat16``) an inference-only encoder runs in on ``device``.

    ``auto`` (or None) picks ``bfloat16`` where the hardware computes it natively (a CUDA GPU that supports
    it, a CPU with AVX512-BF16/AMX) and ``float32`` elsewhere; the other values are taken as given."""
    spec = (spec or "auto").strip().lower()
    if spec not in PRECISIONS:
        raise DeviceError(f"precision {spec!r} is not one of {', '.join(PRECISIONS)}")
    if spec != "auto":
        return spec
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    if device == "cpu":
        return "bfloat16" if cpu_has_native_bf16() else "float32"
    return "float32"
