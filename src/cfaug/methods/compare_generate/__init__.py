"""Compare&Generate (Rong et al.) and the prompting strategies it is compared with, each a registered
method on the LLM layer: ``few-shot``, ``cot``, ``self-refine``, ``opro`` and ``compare-generate``
(``zero-shot`` lives in :mod:`cfaug.methods.zero_shot`). See docs/strategies.md for choosing one.

Its own parts: :mod:`.objective` (the score a search optimises), :mod:`.judges` (the label judge inside a
search) and :mod:`.search` (what OPRO and Compare&Generate share). Parts it shares with other methods live
below it: :mod:`cfaug.demonstrations` (example pairs and how they are picked) and
:mod:`cfaug.methods.strategy` (what every prompting strategy does per item).
"""

from cfaug.methods.compare_generate import cot, few_shot, method, opro, self_refine  # noqa: F401  (registers)
from cfaug.methods.compare_generate.method import CompareGenerate
from cfaug.methods.compare_generate.opro import OPRO
from cfaug.methods.compare_generate.self_refine import SelfRefine
from cfaug.methods.compare_generate.cot import ChainOfThought
from cfaug.methods.compare_generate.few_shot import FewShot

__all__ = ["ChainOfThought", "CompareGenerate", "FewShot", "OPRO", "SelfRefine"]
