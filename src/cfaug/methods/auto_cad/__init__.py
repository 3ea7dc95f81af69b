"""auto-CAD: counterfactuals from causal terms (RM-CT, REP-CT) with a minimality filter."""

from cfaug.methods.auto_cad.method import AutoCAD, AutoCADConfig

__all__ = ["AutoCAD", "AutoCADConfig"]
