"""Target-to-source augmentation for aspect sentiment triplet extraction (``t2s``)."""

from cfaug.methods.t2s.method import T2S, T2SConfig

__all__ = ["T2S", "T2SConfig"]
