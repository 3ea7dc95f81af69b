import pytest

from cfaug.methods import METHODS
from cfaug.registry import Registry, RegistryError


@pytest.fixture
def reg():
    r = Registry("widget")
    for name in ("spin.v1", "spin.v2", "spin.v10", "spin-fast.v1"):
        r.register(name, f"a {name}")(name.upper())
    return r


def test_bare_name_resolves_to_the_newest_version(reg):
    assert reg.resolve("spin") == "spin.v10"  # numeric order, not "v2" > "v10"
    assert reg.get("spin") == "SPIN.V10"
    assert reg.resolve("spin-fast") == "spin-fast.v1"


def test_full_names_resolve_to_themselves(reg):
    assert reg.resolve("spin.v2") == "spin.v2"
    assert reg.get("spin.v1") == "SPIN.V1"


def test_unknown_name_lists_what_is_known(reg):
    with pytest.raises(RegistryError) as err:
        reg.get("spun")
    assert str(err.value) == "unknown widget 'spun'; known: spin-fast.v1, spin.v1, spin.v10, spin.v2"
    with pytest.raises(RegistryError, match="unknown widget 'spin.v3'"):
        reg.resolve("spin.v3")
    assert "spun" not in reg and "spin" in reg and "spin.v2" in reg


def test_names_must_carry_a_version_and_be_unique(reg):
    with pytest.raises(ValueError, match="must look like 'name.v1'"):
        reg.register("spin", "no version")
    with pytest.raises(ValueError, match="must look like"):
        reg.register("Spin.V1", "upper case")
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("spin.v1", "again")(object())


def test_entries_are_sorted_and_described(reg):
    assert [(e.name, e.description) for e in reg.entries()][:2] == [("spin-fast.v1", "a spin-fast.v1"),
                                                                    ("spin.v1", "a spin.v1")]


def test_built_in_methods():
    assert METHODS.resolve("auto-cad") == "auto-cad.v1"
    entry = next(e for e in METHODS.entries() if e.name == "auto-cad.v1")
    assert entry.description and entry.obj.name == "auto-cad.v1"
    with pytest.raises(RegistryError, match=r"unknown method 'auto-kad'; known: .*auto-cad\.v1"):
        METHODS.get("auto-kad")
