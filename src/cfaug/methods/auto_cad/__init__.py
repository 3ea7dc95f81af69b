"""auto-CAD: counterfactuals from causal terms (RM-CT, REP-CT) with a minimality filter."""

from cfaug.methods.auto_cad.config import AutoCADConfig
from cfaug.methods.auto_cad.method import AutoCAD

__all__ = ["AutoCAD", "AutoCADConfig"]
