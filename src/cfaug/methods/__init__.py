"""Generation methods. Importing this package registers every built-in method in :data:`METHODS`."""

from cfaug.methods.base import METHODS, Method, MethodConfigError, build_config

from cfaug.methods import auto_cad  # noqa: E402,F401  (registers auto-cad.v1)
from cfaug.methods import zero_shot  # noqa: E402,F401  (registers zero-shot.v1)
from cfaug.methods import compare_generate  # noqa: E402,F401  (registers few-shot, cot, self-refine, opro, compare-generate)

__all__ = ["METHODS", "Method", "MethodConfigError", "build_config"]
