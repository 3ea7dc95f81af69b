"""Loading English tagging and parsing pipelines that need no network.

cfaug ships one pipeline, ``en_ewt``: a spaCy pipeline (tagger with Penn Treebank tags, morphologizer with
universal parts of speech and features, dependency parser, and a table lemmatizer from :mod:`.lemmatizer`)
trained on UD English-EWT by ``tools/nlp/build.py``. Any installed spaCy pipeline can be used instead, by
package name (``en_core_web_sm``) or by folder. Nothing is ever downloaded.

>>> nlp = load_pipeline()                      # the bundled en_ewt
>>> doc = nlp("The food was not worth the price.")
>>> [(t.text, t.pos_, t.dep_) for t in doc][:3]
[('The', 'DET', 'det'), ('food', 'NOUN', 'nsubj'), ('was', 'AUX', 'cop')]
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from cfaug.config import ConfigError

if TYPE_CHECKING:  # spaCy is imported when a pipeline is loaded, not when cfaug is
    from spacy.language import Language
    from spacy.tokens import Doc

#: the name of the pipeline that ships with cfaug
BUNDLED = "en_ewt"

_lock = threading.Lock()


class PipelineError(ConfigError):
    """A tagging/parsing pipeline cannot be found or loaded (a user error: exit code 2)."""


def bundled_path() -> Path:
    """The folder of the bundled ``en_ewt`` pipeline (it may be missing in a source checkout that has not
    built it; see ``tools/nlp/build.py``)."""
    return Path(str(resources.files("cfaug.resources") / "nlp" / BUNDLED))


def resolve_pipeline(name: str | None) -> Path | str:
    """Where ``name`` comes from: the bundled folder, a folder, or an installed package name.

    Raises :class:`PipelineError` with what was looked for when none of these exists.
    """
    if name in (None, "", BUNDLED):
        path = bundled_path()
        if not (path / "meta.json").is_file():
            raise PipelineError(
                f"the bundled pipeline {BUNDLED!r} is missing from {path}; rebuild it from UD English-EWT with "
                "`python tools/nlp/build.py --ud DIR` or pass another spaCy pipeline by folder or package name")
        return path
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "meta.json").is_file() and not (path / "config.cfg").is_file():
            raise PipelineError(f"{path}: not a spaCy pipeline folder (no meta.json or config.cfg)")
        return path
    import spacy.util

    if spacy.util.is_package(name):
        return name
    raise PipelineError(
        f"spaCy pipeline {name!r} is neither a folder nor an installed package; cfaug never downloads models. "
        f"Install the pipeline's wheel, pass its folder, or use the bundled {BUNDLED!r}")


@lru_cache(maxsize=8)
def _load(source: str, exclude: tuple[str, ...], only: tuple[str, ...] | None) -> Language:
    import spacy

    import cfaug.nlp.lemmatizer  # noqa: F401  (registers the bundled pipeline's lemmatizer factory)

    try:
        nlp = spacy.load(source, exclude=list(exclude))
    except (OSError, ValueError) as exc:
        raise PipelineError(f"cannot load spaCy pipeline {source}: {exc}") from exc
    if only is not None:
        for component in list(nlp.pipe_names):
            if component not in only:
                nlp.disable_pipe(component)
    return nlp


def load_pipeline(name: str | None = None, *, exclude: Sequence[str] = (),
                  only: Sequence[str] | None = None) -> Language:
    """Load (once per process) the pipeline ``name``: ``None`` or ``"en_ewt"`` for the bundled one, a folder,
    or an installed spaCy package. ``exclude`` drops components that are not needed (e.g.
    ``("lemmatizer",)``); ``only`` runs just the components named (e.g. ``("tok2vec", "tagger")``
    for tags alone, several times faster than the whole pipeline)."""
    source = str(resolve_pipeline(name))
    with _lock:
        return _load(source, tuple(sorted(exclude)), None if only is None else tuple(sorted(only)))


def describe_pipeline(nlp: Language) -> dict[str, object]:
    """Facts about a loaded pipeline for a run manifest: name, version, spaCy version, components."""
    meta = nlp.meta
    return {"name": f"{meta.get('lang', '?')}_{meta.get('name', '?')}" if meta.get("name") != BUNDLED
            else BUNDLED, "version": meta.get("version"), "spacy_version": meta.get("spacy_version"),
            "components": list(nlp.pipe_names)}


def parse(texts: Iterable[str], nlp: Language | None = None, *, batch_size: int = 256,
          n_process: int = 1) -> Iterator[Doc]:
    """Tag and parse ``texts`` in batches (``n_process > 1`` forks spaCy worker processes)."""
    nlp = nlp if nlp is not None else load_pipeline()
    yield from nlp.pipe(texts, batch_size=batch_size, n_process=n_process)
