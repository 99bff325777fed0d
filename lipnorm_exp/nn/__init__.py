"""Attention layers with LipschitzNorm, and one call that swaps them into a model.

GAT, graph transformer, GATv2 and multi-head attention layers; the protocols a score
normalisation keeps to plug into them ([`score_norm`][lipnorm_exp.nn.score_norm]);
[`lipschitz_normalize`][lipnorm_exp.nn.convert.lipschitz_normalize].
"""

from lipnorm_exp.nn.convert import lipschitz_normalize
from lipnorm_exp.nn.dense_lipschitz_norm import DenseLipschitzNorm
from lipnorm_exp.nn.gat_layer import GATLayer
from lipnorm_exp.nn.gat_lipschitz_norm import GATLipschitzNorm
from lipnorm_exp.nn.gatv2_layer import GATv2Layer
from lipnorm_exp.nn.gt_layer import GTLayer
from lipnorm_exp.nn.gt_lipschitz_norm import GTLipschitzNorm
from lipnorm_exp.nn.multihead_attention import LipschitzMultiheadAttention
from lipnorm_exp.nn.score_lipschitz_norm import ScoreLipschitzNorm
from lipnorm_exp.nn.score_norm import (
    DenseScoreNorm,
    GATScoreNorm,
    GATv2ScoreNorm,
    GTScoreNorm,
    ScoreNorm,
)

__all__ = [
    "DenseLipschitzNorm",
    "DenseScoreNorm",
    "GATLayer",
    "GATLipschitzNorm",
    "GATScoreNorm",
    "GATv2Layer",
    "GATv2ScoreNorm",
    "GTLayer",
    "GTLipschitzNorm",
    "GTScoreNorm",
    "LipschitzMultiheadAttention",
    "ScoreLipschitzNorm",
    "ScoreNorm",
    "lipschitz_normalize",
]
