"""Word and phrase importance: how much a span of a text drives a classifier toward a label.

* Span importance (:mod:`.occlusion`): registered in :data:`IMPORTANCE`; each takes *units* (a span to
  score, described by pairs of (context with the span, context without it)) and a classifier's
  ``predict_proba``, and returns one score per unit, computing every perturbation of a batch in one call.
  ``occlusion.v1`` is Eq. 1 of the auto-CAD paper.
* Word importance (:mod:`.words`): LIME, Integrated Gradients and Shapley value sampling over a text's
  words, registered in :data:`WORD_IMPORTANCE`.
* Ensembles (:mod:`.ensemble`): principal and spurious words by votes of several (classifier, method)
  pairs, and the overlap analysis of CoBA's Table 1.
"""

from cfaug.importance.ensemble import Ensemble, Overlap, Votes, overlap, vote
from cfaug.importance.occlusion import IMPORTANCE, OcclusionImportance, Unit, build_importance
from cfaug.importance.words import WORD_IMPORTANCE, WordScores, build_word_importance, candidate_words

__all__ = ["Ensemble", "IMPORTANCE", "OcclusionImportance", "Overlap", "Unit", "Votes", "WORD_IMPORTANCE",
           "WordScores", "build_importance", "build_word_importance", "candidate_words", "overlap", "vote"]
