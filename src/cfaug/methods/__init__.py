"""Generation methods. Importing this package registers every built-in method in :data:`METHODS`."""

from cfaug.methods.base import METHODS, Method, Preset, Resources, preset_params

from cfaug.methods import auto_cad  # noqa: E402,F401  (registers auto-cad.v1)
from cfaug.methods import zero_shot  # noqa: E402,F401  (registers zero-shot.v1)
from cfaug.methods import compare_generate  # noqa: E402,F401  (registers few-shot, cot, self-refine, opro, compare-generate)
from cfaug.methods import coba  # noqa: E402,F401  (registers coba.v1)
from cfaug.methods import lass  # noqa: E402,F401  (registers lass.v1, lass-pairs.v1)
from cfaug.methods import t2s  # noqa: E402,F401  (registers t2s.v1)

__all__ = ["METHODS", "Method", "Preset", "Resources", "build_method", "method_params"]


def method_params(name: str, params: dict | None = None, preset: str | None = None) -> dict:
    """The parameters method ``name`` is built with: ``params`` over the values of ``preset``."""
    return preset_params(METHODS.get(name), preset, dict(params or {}))


def build_method(name: str, params: dict | None = None, seed: int = 0, preset: str | None = None) -> Method:
    """The registered method ``name`` (newest version for a bare name) configured with ``params`` over the
    values of ``preset`` (strings are converted and every value checked against its declaration)."""
    from cfaug.config import build_config

    cls = METHODS.get(name)
    return cls(build_config(cls.Config, method_params(name, params, preset), owner=cls.name), seed=seed)
