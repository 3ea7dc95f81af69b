"""``cfaug parts``: every registered part (methods, judges, filters, importance methods, word-importance
methods, classifiers, proposers, tasks, engines) with its parameters and their documentation."""

from __future__ import annotations

import argparse
from typing import Any

from cfaug.config import describe_params

KINDS = ("methods", "judges", "filters", "importance", "word-importance", "classifiers", "proposers", "tasks",
         "engines")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("parts", help="list registered parts and their parameters",
                       description="List the building blocks recipes are made of, by kind, with versioned names, "
                                   "descriptions and parameters. In config files a part is written as "
                                   "{'@<kind>': 'name.v1', <parameter>: <value>, ...}.")
    p.add_argument("kind", nargs="?", choices=KINDS, help="only this kind")
    p.set_defaults(func=run)


def registries() -> dict[str, tuple[Any, Any]]:
    """(registry, function giving an entry's parameter dataclass) by kind."""
    import cfaug.filters.builtin  # noqa: F401  (registers)
    import cfaug.judges.builtin  # noqa: F401
    import cfaug.methods  # noqa: F401  (registers methods and the LLM judge)
    import cfaug.proposers.replacements  # noqa: F401  (registers lexicon.v1, masked-lm.v1)
    import cfaug.run.engines  # noqa: F401
    from cfaug.data.tasks import TASKS
    from cfaug.filters import FILTERS
    from cfaug.classifiers import CLASSIFIERS
    from cfaug.importance import IMPORTANCE, WORD_IMPORTANCE
    from cfaug.judges.registry import JUDGES
    from cfaug.methods import METHODS
    from cfaug.proposers import PROPOSERS
    from cfaug.run.engines import ENGINES

    return {
        "methods": (METHODS, lambda obj: obj.Config),
        "judges": (JUDGES, lambda obj: obj.Config),
        "filters": (FILTERS, lambda obj: obj.Config),
        "importance": (IMPORTANCE, lambda obj: obj[0]),
        "word-importance": (WORD_IMPORTANCE, lambda obj: obj[0]),
        "classifiers": (CLASSIFIERS, lambda obj: obj.Config),
        "proposers": (PROPOSERS, lambda obj: None),
        "tasks": (TASKS, lambda obj: None),
        "engines": (ENGINES, lambda obj: None),
    }


def run(args: argparse.Namespace) -> int:
    for kind, (registry, config_of) in registries().items():
        if args.kind and kind != args.kind:
            continue
        print(f"{kind}:")
        for entry in registry.entries():
            print(f"  {entry.name:<26} {entry.description}")
            cfg = config_of(entry.obj)
            for info in describe_params(cfg) if cfg is not None else []:
                print(f"      {info.line()}")
    return 0
