"""English tagging and dependency parsing that works offline: the bundled ``en_ewt`` spaCy pipeline (trained
on UD English-EWT) or any installed spaCy pipeline. Shared by auto-CAD (part-of-speech–aware edits), CoBA
(subject–predicate–object triples) and target-to-source (dependency templates)."""

from cfaug.nlp.pipeline import (BUNDLED, PipelineError, bundled_path, describe_pipeline, load_pipeline, parse,
                                 resolve_pipeline)

__all__ = ["BUNDLED", "PipelineError", "bundled_path", "describe_pipeline", "load_pipeline", "parse", "resolve_pipeline"]
