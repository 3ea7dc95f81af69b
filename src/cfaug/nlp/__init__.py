"""English tagging and dependency parsing that works offline: the bundled ``en_ewt`` spaCy pipeline (trained
on UD English-EWT) or any installed spaCy pipeline. Shared by auto-CAD (part-of-speech–aware edits), CoBA
(subject–predicate–object triples, :mod:`.triples`; gender swapping, :mod:`.gender`) and target-to-source
(dependency templates)."""

from cfaug.nlp.pipeline import (BUNDLED, PipelineError, bundled_path, describe_pipeline, load_pipeline, parse,
                                 resolve_pipeline)
from cfaug.nlp.triples import Span, Triple, describe_triple, extract_triples, text_triples

__all__ = ["BUNDLED", "PipelineError", "Span", "Triple", "bundled_path", "describe_pipeline", "describe_triple",
           "extract_triples", "load_pipeline", "parse", "resolve_pipeline", "text_triples"]
