"""The floors of the package, read from the source (imports inside functions count too):

- every import points down or stays on its floor;
- no method package imports another method (they share parts that live below them);
- nothing in ``cfaug.evaluate`` imports a method (evaluation judges independently of the generators);
- the top-level packages import each other without a cycle.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import cfaug

SRC = Path(cfaug.__file__).parent

#: package or module -> floor; a module may import from its own floor and the floors below it
FLOORS = {
    # ground: settings, registries, errors, the device rule, loading models by local path
    "cfaug.config": 0, "cfaug.registry": 0, "cfaug.errors": 0, "cfaug.quoting": 0, "cfaug.lazy": 0, "cfaug.device": 0,
    "cfaug.local_models": 0,
    # data: records, tasks, readers and writers; English text processing
    "cfaug.data": 1, "cfaug.nlp": 1,
    # parts: what recipes are made of
    "cfaug.training": 2, "cfaug.classifiers": 2, "cfaug.judges": 2, "cfaug.importance": 2, "cfaug.filters": 2,
    "cfaug.proposers": 2, "cfaug.editing": 2, "cfaug.demonstrations": 2, "cfaug.seq2seq": 2, "cfaug.aste": 2,
    "cfaug.packaged_models": 2,
    # the LLM layer
    "cfaug.llm": 3,
    # the recipes
    "cfaug.methods": 4,
    # running them
    "cfaug.run": 5,
    "cfaug.api": 6, "cfaug.evaluate": 6, "cfaug.review": 6, "cfaug.compare": 6,
    "cfaug.cli": 7,
}
#: the package root re-exports the API and the command module runs the CLI: they sit on top
TOP = {"cfaug", "cfaug.__main__"}
#: modules of ``cfaug.methods`` that every method may build on (the method protocol, the LLM method base,
#: the prompting strategies); everything else under ``cfaug.methods`` is one method's own
SHARED_METHOD_MODULES = {"cfaug.methods", "cfaug.methods.base", "cfaug.methods.llm_method", "cfaug.methods.strategy"}


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in FLOORS:
            return FLOORS[name]
    return None


def module_name(path: Path, src: Path = SRC) -> str:
    rel = path.relative_to(src.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path, module: str | None = None) -> list[tuple[int, str]]:
    """(line, imported module) for every cfaug import in ``path``; ``from x import y`` counts as ``x.y``
    too when ``y`` names a module, and relative imports are resolved against ``module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("cfaug")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and module:
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            if base.startswith("cfaug"):
                out.append((node.lineno, base))
                out += [(node.lineno, f"{base}.{a.name}") for a in node.names
                        if _is_module(f"{base}.{a.name}")]
    return out


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def method_of(module: str) -> str | None:
    """The method a module belongs to (``cfaug.methods.coba`` for ``cfaug.methods.coba.offline``,
    ``cfaug.methods.zero_shot`` for itself); None outside the methods or for a shared module."""
    parts = module.split(".")
    if parts[:2] != ["cfaug", "methods"] or len(parts) < 3 or module in SHARED_METHOD_MODULES:
        return None
    return ".".join(parts[:3])


def top_package(module: str) -> str:
    return ".".join(module.split(".")[:2])


@functools.lru_cache(maxsize=1)
def all_imports() -> tuple[tuple[str, Path, int, str], ...]:
    """(importing module, its file, line, imported module) over the whole package."""
    out: list[tuple[str, Path, int, str]] = []
    for path in sorted(SRC.rglob("*.py")):
        mod = module_name(path)
        out += [(mod, path, line, target) for line, target in imports(path, mod)]
    return tuple(out)


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(SRC.parent)}:{line}"


def test_every_module_has_a_floor():
    missing = [module_name(p) for p in SRC.rglob("*.py")
               if module_name(p) not in TOP and floor_of(module_name(p)) is None]
    assert not missing, f"modules without a floor in FLOORS: {missing}"


def test_imports_point_down():
    violations = []
    for mod, path, line, target in all_imports():
        if mod in TOP:
            continue
        here, there = floor_of(mod), floor_of(target)
        if there is not None and here is not None and there > here:
            violations.append(f"{where(path, line)} ({mod}, floor {here}) imports {target} (floor {there})")
    assert not violations, "imports that point up:\n" + "\n".join(violations)


def test_no_method_imports_another():
    violations = [f"{where(path, line)}: {mod} imports {target}" for mod, path, line, target in all_imports()
                  if method_of(mod) and method_of(target) and method_of(mod) != method_of(target)]
    assert not violations, "a method reaches into another (move the shared part down):\n" + "\n".join(violations)


def test_evaluation_imports_no_method():
    violations = [f"{where(path, line)}: {mod} imports {target}" for mod, path, line, target in all_imports()
                  if mod.startswith("cfaug.evaluate") and target.startswith("cfaug.methods")]
    assert not violations, "evaluate/ imports a method:\n" + "\n".join(violations)


def package_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_top_level_packages_have_no_cycle():
    edges: dict[str, set[str]] = defaultdict(set)
    for mod, _path, _line, target in all_imports():
        if mod in TOP:
            continue
        a, b = top_package(mod), top_package(target)
        if a != b and b != "cfaug":
            edges[a].add(b)
    cycles = package_cycles(edges)
    assert not cycles, f"packages that import each other: {cycles}"


def test_the_checks_can_fail(tmp_path):
    """Each rule catches what it is for: an upward import, a method importing another, a cycle."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from cfaug.cli import main\n")
    assert imports(bad) == [(2, "cfaug.cli")]
    assert floor_of("cfaug.cli") > floor_of("cfaug.data.io")
    assert method_of("cfaug.methods.coba.offline") == "cfaug.methods.coba"
    assert method_of("cfaug.methods.auto_cad.method") != method_of("cfaug.methods.coba.offline")
    assert method_of("cfaug.methods.base") is None and method_of("cfaug.methods.zero_shot") == "cfaug.methods.zero_shot"
    assert package_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert package_cycles({"a": {"b"}, "b": {"c"}}) == []
    rel = tmp_path / "cfaug" / "methods" / "coba"
    rel.mkdir(parents=True)
    (rel / "x.py").write_text("from ..auto_cad import method\n")
    assert imports(rel / "x.py", "cfaug.methods.coba.x")[0] == (1, "cfaug.methods.auto_cad")
