"""The floors of the package: every import points down (or stays on its floor). Read from the source, so
imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import cfaug

SRC = Path(cfaug.__file__).parent

#: package -> floor; a module may import from its own floor and the floors below it
FLOORS = {
    "cfaug.data": 0, "cfaug.registry": 0, "cfaug.config": 0, "cfaug.errors": 0, "cfaug.lazy": 0,
    "cfaug.training": 1, "cfaug.judges": 1, "cfaug.importance": 1, "cfaug.filters": 1, "cfaug.proposers": 1,
    "cfaug.llm": 1, "cfaug.nlp": 1, "cfaug.classifiers": 1, "cfaug.aste": 1,
    "cfaug.methods": 2,
    "cfaug.run": 3,
    "cfaug.api": 4, "cfaug.evaluate": 4,
    "cfaug.cli": 5,
}
#: the package root re-exports the API and the command module runs the CLI: they sit on top
TOP = {"cfaug", "cfaug.__main__"}


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in FLOORS:
            return FLOORS[name]
    return None


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("cfaug")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cfaug") and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def test_every_module_has_a_floor():
    missing = [module_name(p) for p in SRC.rglob("*.py")
               if module_name(p) not in TOP and floor_of(module_name(p)) is None]
    assert not missing, f"modules without a floor in FLOORS: {missing}"


def test_imports_point_down():
    violations = []
    for path in sorted(SRC.rglob("*.py")):
        mod = module_name(path)
        if mod in TOP:
            continue
        here = floor_of(mod)
        for line, target in imports(path):
            there = floor_of(target)
            if there is not None and here is not None and there > here:
                violations.append(f"{path.relative_to(SRC.parent)}:{line} ({mod}, floor {here}) imports "
                                  f"{target} (floor {there})")
    assert not violations, "imports that point up:\n" + "\n".join(violations)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The check itself can fail: a lower-floor module importing the CLI is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from cfaug.cli import main\n")
    assert imports(bad) == [(2, "cfaug.cli")]
    assert floor_of("cfaug.cli") > floor_of("cfaug.data.io")
