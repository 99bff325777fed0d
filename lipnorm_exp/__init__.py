"""LipschitzNorm for self-attention GNN layers: layers, experiments, records and reports."""

__version__ = "0.3.0"  # the package's one version (pyproject.toml reads it; CHANGELOG.md)
