"""Tiny random Hugging Face models of every architecture the installed ``transformers`` offers
(nothing downloaded): each ``AutoModel`` architecture built from its default config with its
widths, depths and sizes made small, with inputs for one forward pass. An architecture whose
tiny model cannot be built, or does not run its own forward pass, is left out (``None``)."""

import contextlib
import io
import warnings

import torch

#: config attributes set where a config has them (through its attribute_map, whatever its names)
SMALL = {
    "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 64, "vocab_size": 99,
    "max_position_embeddings": 64, "image_size": 32, "patch_size": 8, "num_channels": 3,
    "head_dim": 8, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
    "num_layers": 2, "num_heads": 4, "d_kv": 8, "d_ff": 64, "num_decoder_layers": 2,
    "embed_dim": 32, "window_size": 4, "depths": [1, 1], "num_experts": 4,
    "num_local_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "sliding_window": 4, "ffn_dim": 64, "n_positions": 64,
}  # fmt: skip
BATCH, LENGTH = 2, 8
#: the most parameters a tiny model may have: an architecture whose sizes the shrinking above
#: does not reach (a config of its own kind of parts) is left out, not built at full size
MAX_PARAMETERS = 5_000_000


def architectures() -> list[str]:
    """The names of the installed ``AutoModel`` architectures (model types), sorted."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return sorted(MODEL_MAPPING_NAMES)


def tiny(model_type: str):
    """``(model, inputs)`` of a tiny random ``model_type`` in eval mode, or ``None``."""
    from transformers import AutoConfig, AutoModel

    torch.manual_seed(0)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            config = AutoConfig.for_model(model_type)
            _shrink(config)
            with torch.device("meta"):  # counted before any memory is taken
                size = sum(p.numel() for p in AutoModel.from_config(config).parameters())
            if size > MAX_PARAMETERS:
                return None
            model = AutoModel.from_config(config).eval()
            inputs = _inputs(model, config)
            if inputs is None:
                return None
            with torch.no_grad():
                model(**inputs)
    except Exception:  # noqa: BLE001 (an architecture that needs more than defaults)
        return None
    return model, inputs


def _shrink(config) -> None:
    """Set the :data:`SMALL` sizes a config (and its text, vision or coder parts) has."""
    for name, value in SMALL.items():
        old = getattr(config, name, None)
        if old is None or isinstance(old, dict) or isinstance(old, list) != isinstance(value, list):
            continue
        with contextlib.suppress(Exception):  # a size its config validates otherwise
            setattr(config, name, value[: len(old)] if isinstance(value, list) else value)
    ratios = getattr(config, "sr_ratios", None)  # SegFormer, GLPN: keys pooled by these
    if isinstance(ratios, list | tuple):  # at most 2, so that a tiny image leaves > 1 key
        config.sr_ratios = [min(ratio, 2) for ratio in ratios]
    for sub in ("text_config", "vision_config", "encoder", "decoder"):
        inner = getattr(config, sub, None)
        if inner is not None and hasattr(inner, "to_dict"):
            _shrink(inner)


def _inputs(model, config) -> dict | None:
    name = model.main_input_name
    gen = torch.Generator().manual_seed(1)
    if name == "input_ids":
        vocab = getattr(config, "vocab_size", None) or 99
        ids = torch.randint(3, min(vocab, 99), (BATCH, LENGTH), generator=gen)
        inputs = {"input_ids": ids}
        if model.config.is_encoder_decoder:
            inputs["decoder_input_ids"] = ids[:, :5]
        return inputs
    if name == "pixel_values":
        size = getattr(config, "image_size", 32)
        size = size if isinstance(size, int) else size[0]
        channels = getattr(config, "num_channels", 3)
        return {"pixel_values": torch.randn(BATCH, channels, size, size, generator=gen)}
    return None
