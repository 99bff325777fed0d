"""LipschitzNorm for self-attention GNN layers: layers, experiments, records and reports."""

__version__ = "0.1.0"
