"""Declaring, reading and checking parameters: one declaration per option.

A parameter is a dataclass field made with :func:`param`: its default, its documentation, its range or
choices and its role live in one place, and the same declaration drives the command line (``cfaug augment``
flags, ``-p KEY=VALUE``), the Python API (keyword arguments), the saved run config and ``cfaug methods -v`` /
``cfaug parts``. :func:`build_config` turns a mapping of values (strings from the command line, or typed
values from Python or a config file) into the dataclass, converting and checking each value.

Config files (``--config run.yaml``) are YAML or JSON mappings, read by :func:`read_mapping`.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cfaug.quoting import quote, quote_list

_MISSING = dataclasses.MISSING


class ConfigError(ValueError):
    """A parameter or option is unknown, has a value of the wrong kind, or is out of range."""


class ConfigFileError(ConfigError):
    """A config file is missing, unparseable, or does not hold a mapping."""


def param(default: Any = _MISSING, help: str = "", *, default_factory: Any = _MISSING,
          min: float | None = None, max: float | None = None, choices: Sequence[Any] | None = None,
          fit: bool = False, identity: bool = True, group: str = "", flag: str | None = None,
          metavar: str | None = None) -> Any:
    """A declared parameter (a dataclass field).

    ``help``: one sentence for ``--help``, ``cfaug methods -v`` and ``cfaug parts``; ``min``/``max``:
    inclusive bounds of a number; ``choices``: the allowed values; ``fit``: the value changes what a
    method learns in its training stage (it is part of the artifact fingerprint); ``identity``: the value
    changes what a run produces (a run directory made with another value refuses to resume). Settings that
    only change speed or cost set ``identity=False``. ``group``, ``flag`` and ``metavar`` place a run option
    on the command line (``flag=""``: not a flag of its own).
    """
    meta = {"help": help, "min": min, "max": max, "choices": tuple(choices) if choices else None,
            "fit": fit, "identity": identity, "group": group, "flag": flag, "metavar": metavar}
    if default_factory is not _MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class ParamInfo:
    """What :func:`describe_params` says about one parameter."""

    name: str
    default: Any
    type: str
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] | None = None
    fit: bool = False
    identity: bool = True

    def line(self) -> str:
        """``name = default  [range]  help`` for listings."""
        extra = ""
        if self.choices:
            extra = "  {" + ", ".join(map(str, self.choices)) + "}"
        elif self.min is not None or self.max is not None:
            lo = "" if self.min is None else _number(self.min)
            hi = "" if self.max is None else _number(self.max)
            extra = f"  [{lo}..{hi}]"
        text = f"{self.name} = {self.default!r}{extra}"
        return f"{text:<44} {self.help}" if self.help else text


def describe_params(config_cls: type) -> list[ParamInfo]:
    """Every parameter of a config dataclass with its default, type, documentation and range. A field
    declared without :func:`param` is documented by its ``#:`` comment in the source, when it has one."""
    if not dataclasses.is_dataclass(config_cls):
        return []
    fields = dataclasses.fields(config_cls)
    # reading the source is slow (inspect parses the whole module): only for fields that need it
    comments = _field_comments(config_cls) if any(not f.metadata.get("help") for f in fields) else {}
    out = []
    for f in fields:
        if f.default is not _MISSING:
            default = f.default
        elif f.default_factory is not _MISSING:
            default = f.default_factory()
        else:
            default = "(required)"
        m = f.metadata
        out.append(ParamInfo(f.name, default, _type_name(f), m.get("help") or comments.get(f.name, ""),
                             m.get("min"), m.get("max"), m.get("choices"), bool(m.get("fit", False)),
                             bool(m.get("identity", True))))
    return out


def build_config(config_cls: type, params: Mapping[str, Any], owner: str = "") -> Any:
    """``config_cls`` built from ``params``: strings from the command line are converted to the field's
    type, and every value is checked against the field's declared range and choices.

    Raises :class:`ConfigError` naming the owner (a method or part name), the parameter and the problem.
    """
    who = f" of {owner}" if owner else ""
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise ConfigError(f"unknown parameter(s){who}: {unknown_names(unknown, fields)}; "
                          f"valid: {', '.join(sorted(fields))}")
    kwargs = {k: check_value(k, _coerce(k, v, fields[k], who), fields[k], who) for k, v in params.items()}
    return config_cls(**kwargs)


def nearest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to a misspelt ``name`` (``metod`` -> ``method``), or None when none is close."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_names(unknown: Iterable[str], known: Iterable[str]) -> str:
    """Unknown names for a message, each followed by the nearest known one when there is one:
    ``min_similarty (did you mean min_similarity?), colour``."""
    known = list(known)
    out = []
    for name in unknown:
        near = nearest_name(name, known)
        out.append(quote_list([name]) + (f" (did you mean {near}?)" if near else ""))
    return ", ".join(out)


def check_value(name: str, value: Any, f: dataclasses.Field, who: str = "") -> Any:
    """``value`` if it satisfies the field's declared ``min``/``max``/``choices``; else :class:`ConfigError`."""
    m = f.metadata
    if value is None:
        return value
    if m.get("choices") and value not in m["choices"]:
        raise ConfigError(f"parameter {name}{who}: {quote(value)} is not one of {', '.join(map(str, m['choices']))}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if m.get("min") is not None and value < m["min"]:
            raise ConfigError(f"parameter {name}{who}: {value} is below the minimum {_number(m['min'])}")
        if m.get("max") is not None and value > m["max"]:
            raise ConfigError(f"parameter {name}{who}: {value} is above the maximum {_number(m['max'])}")
    return value


def config_dict(config: Any) -> dict[str, Any]:
    """A config dataclass as a plain mapping (empty for anything else)."""
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else {}


def select_params(config: Any, *, fit: bool | None = None, identity: bool | None = None) -> dict[str, Any]:
    """The config's values restricted to fields whose ``fit`` / ``identity`` flags match."""
    if not dataclasses.is_dataclass(config):
        return {}
    out = {}
    for f in dataclasses.fields(config):
        if fit is not None and bool(f.metadata.get("fit", False)) != fit:
            continue
        if identity is not None and bool(f.metadata.get("identity", True)) != identity:
            continue
        out[f.name] = json.loads(json.dumps(getattr(config, f.name), default=str))
    return out


def read_mapping(path: str | Path) -> dict[str, Any]:
    """The mapping stored in ``path``: JSON for ``.json``, YAML otherwise."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ConfigFileError(f"{path}: file not found")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - json and yaml raise many kinds
        raise ConfigFileError(f"{path}: cannot parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path}: expected a mapping of names to values")
    return data


# -- helpers -----------------------------------------------------------------------------------------
def _number(value: float) -> str:
    """A bound for a message: an int in full (``4294967295``), a float as ``:g`` writes it (``0.5``)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _type_name(f: dataclasses.Field) -> str:
    return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))


def _coerce(name: str, value: Any, f: dataclasses.Field, who: str = "") -> Any:
    typ = _type_name(f)
    default = f.default if f.default is not _MISSING else None
    if typ.startswith(("dict", "Mapping")) and value is not None and not isinstance(value, Mapping):
        raise ConfigError(f"parameter {name}{who} takes a mapping of names to values (in a config file, "
                          f"{name}: {{KEY: VALUE, ...}}), not a single value")
    if not isinstance(value, str):
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int) and (typ.startswith("float") or isinstance(default, float)):
            return float(value)
        return value
    try:
        if isinstance(default, bool) or typ.startswith("bool"):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if value.lower() in ("none", "null") and "None" in typ:
            return None
        if isinstance(default, int) or typ.startswith("int"):
            return int(value)
        if isinstance(default, float) or typ.startswith("float"):
            return float(value)
    except ValueError:
        raise ConfigError(f"parameter {name}{who}: cannot read {quote(value)} as {typ}") from None
    if value.lower() in ("none", "null") and "None" in typ:
        return None
    return value


_COMMENT = re.compile(r"^\s*(\w+)\s*:[^=#]*(?:=[^#]*)?#:\s*(.+)$")


def _field_comments(cls: type) -> dict[str, str]:
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            src = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        for line in src.splitlines():
            m = _COMMENT.match(line)
            if m:
                out[m.group(1)] = m.group(2).strip()
    return out
