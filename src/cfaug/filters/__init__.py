"""Filters keep candidates that pass thresholds. Every method records them the same way::

    meta["filters"] = {"flip": True, "edit_rate": False, "similarity": None}   # None: not computed
    meta["passed"] = False                                                     # every filter passed?

A filter is built from a spec (``{"@filters": "max-edit-rate.v1", "max": 0.3}`` or a name) and checks a
batch of :class:`~cfaug.judges.base.Candidate` objects; filters run in order and a candidate that failed
one is not checked by the later ones (their verdict is None), so expensive filters go last.
"""

from cfaug.filters.base import FILTERS, Filter, apply_filters, build_filter, record_filters

__all__ = ["FILTERS", "Filter", "apply_filters", "build_filter", "record_filters"]
