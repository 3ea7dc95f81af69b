"""Package names imported on first use: a package's ``__init__`` names where each of its exports lives, and
importing the package stays light (``cfaug --help`` loads no runner, method or model library)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str],
                 exports: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``homes`` maps each exported name to the module that
    defines it (a submodule name such as ``"client"``, or a full module path); ``exports`` is the package's
    ``__all__``.

    >>> getattr_, dir_ = lazy_exports("cfaug.training", {"fold_of": "crossfit"}, ["fold_of"])
    >>> getattr_("fold_of").__name__, "fold_of" in dir_()
    ('fold_of', True)
    """
    names = list(exports)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = home if home.startswith("cfaug.") else f"{package}.{home}"
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        import sys

        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
