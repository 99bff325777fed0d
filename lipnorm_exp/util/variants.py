"""Names of the layers' variants, without torch (the config checks them).

LipschitzNorm's (``norm.variant``) and the attention layers' message paths
(``model.message_path``).
"""

__all__ = ["MESSAGE_PATHS", "VARIANTS"]

VARIANTS = ("paper", "published")
"""``paper``: the paper's equations (default); ``published``: the authors' public code."""

#: how an attention layer sums its weighted messages (`lipnorm_exp.nn.attention.
#: AttentionLayer.sum_messages`)
MESSAGE_PATHS = ("auto", "gather", "csr")
