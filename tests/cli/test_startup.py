"""The first calls of a new user stay light: ``import cfaug``, building the command line (``cfaug --help``) and
listing the methods (``cfaug methods -v``) import none of the heavy libraries (torch, transformers, spaCy,
aiohttp, scikit-learn, datasets); they are imported where they are used. Each check runs in a new process,
since this one has imported them long ago."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

#: libraries that take seconds to import, and whose users import them inside functions
HEAVY = ("torch", "transformers", "sentence_transformers", "spacy", "aiohttp", "sklearn", "datasets")


def imported_after(code: str) -> dict:
    """Run ``code`` in a new Python; which of :data:`HEAVY` it imported, and what it printed."""
    probe = textwrap.dedent(code) + textwrap.dedent(f"""
        import json as _json, sys as _sys
        _sys.__stdout__.write("\\n" + _json.dumps(sorted(m for m in {HEAVY!r} if m in _sys.modules)) + "\\n")
    """)
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    *out, last = res.stdout.rstrip("\n").split("\n")
    return {"heavy": json.loads(last), "stdout": "\n".join(out)}


def test_import_cfaug_and_building_the_parser_import_no_heavy_library():
    res = imported_after("""
        import sys
        import cfaug
        assert "cfaug.api" not in sys.modules, "import cfaug loaded the runner"
        import cfaug.cli
        cfaug.cli.build_parser()
    """)
    assert res["heavy"] == []


def test_help_imports_no_heavy_library():
    res = imported_after("""
        import cfaug.cli
        try:
            cfaug.cli.main(["--help"])
        except SystemExit:
            pass
    """)
    assert res["heavy"] == [] and "augment" in res["stdout"]


@pytest.mark.parametrize("args", [["methods"], ["methods", "-v"]])
def test_listing_methods_imports_no_heavy_library(args):
    res = imported_after(f"""
        import cfaug.cli
        assert cfaug.cli.main({args!r}) == 0
    """)
    assert res["heavy"] == []
    assert "auto-cad.v1" in res["stdout"] and "zero-shot.v1" in res["stdout"]
    if "-v" in args:
        assert "    classifier_background = 'general'" in res["stdout"]


def test_augment_is_still_a_name_of_the_package():
    import cfaug
    from cfaug.api import augment

    assert cfaug.augment is augment and "augment" in dir(cfaug)
    with pytest.raises(AttributeError):
        cfaug.no_such_name  # noqa: B018


def test_lazy_package_names_resolve():
    """The package roots that import their names on first use still give every name they list."""
    import cfaug.llm
    import cfaug.run
    import cfaug.training

    for pkg in (cfaug.llm, cfaug.run, cfaug.training):
        for name in pkg.__all__:
            assert getattr(pkg, name) is not None, f"{pkg.__name__}.{name}"
        assert set(pkg.__all__) <= set(dir(pkg))
        with pytest.raises(AttributeError):
            getattr(pkg, "no_such_name")
