"""The variants of LipschitzNorm, named without torch (the config checks ``norm.variant``)."""

__all__ = ["VARIANTS"]

VARIANTS = ("paper", "published")
"""``paper``: the paper's equations (default); ``published``: the authors' public code."""
