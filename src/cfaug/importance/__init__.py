"""Word and phrase importance: how much a span of a text drives a classifier toward a label.

Importance methods are registered by versioned name in :data:`IMPORTANCE`; each takes *units* (a span to
score, described by pairs of (context with the span, context without it)) and a classifier's
``predict_proba``, and returns one score per unit, computing every perturbation of a batch in one call.
``occlusion.v1`` is Eq. 1 of the auto-CAD paper.
"""

from cfaug.importance.occlusion import IMPORTANCE, OcclusionImportance, Unit, build_importance

__all__ = ["IMPORTANCE", "OcclusionImportance", "Unit", "build_importance"]
