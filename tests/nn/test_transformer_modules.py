"""LipschitzMultiheadAttention inside PyTorch's Transformer modules: as ``self_attn`` and
``multihead_attn`` of ``nn.TransformerEncoderLayer``/``nn.TransformerDecoderLayer``, in
``nn.TransformerEncoder`` and ``nn.Transformer``, the modules' outputs are those of their
layers composed by hand around the normalised attention (Eq. 19), in training and evaluation
mode, with and without gradients, both batch layouts, padding and causal masks: the fused
inference kernels, which would compute plain attention, are never taken."""

import contextlib

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lipnorm_exp.nn import LipschitzMultiheadAttention

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")

E, H, FF, N, L, S = 8, 2, 16, 3, 5, 4
MODES = ["train", "eval", "eval no_grad"]


def lip_copy(attention: nn.MultiheadAttention) -> LipschitzMultiheadAttention:
    """The library's layer with LipschitzNorm and ``attention``'s weights."""
    lip = LipschitzMultiheadAttention(E, H, batch_first=attention.batch_first, norm="lip")
    lip.load_state_dict(attention.state_dict())
    return lip


def randomised(module: nn.Module) -> nn.Module:
    """``module`` with every parameter drawn from N(0, 1/2) (biases and norms included)."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(std=0.5)
    return module.train()


def run(module: nn.Module, mode: str, *args, **kwargs) -> torch.Tensor:
    module.train(mode == "train")
    with torch.no_grad() if mode.endswith("no_grad") else contextlib.nullcontext():
        return module(*args, **kwargs)


def batch(batch_first: bool, length: int, seed: int) -> torch.Tensor:
    x = torch.randn(N, length, E, generator=torch.Generator().manual_seed(seed))
    return x if batch_first else x.transpose(0, 1)


def padding(length: int) -> torch.Tensor:
    """Sequence 0 keeps everything, 1 its first two positions, 2 all but the last."""
    mask = torch.zeros(N, length, dtype=torch.bool)
    mask[1, 2:] = mask[2, -1] = True
    return mask


def causal_mask(length: int) -> torch.Tensor:
    """``True`` above the diagonal: position i attends to positions up to i."""
    return torch.ones(length, length, dtype=torch.bool).triu(1)


def masks(kind: str, length: int) -> dict:
    causal = causal_mask(length)
    return {
        "padding": {"key_padding_mask": padding(length)},
        "causal": {"mask": causal, "is_causal": True},
        "both": {"mask": causal, "key_padding_mask": padding(length)},
    }[kind]


def attend(attention, x, memory, attn_mask=None, key_padding_mask=None, is_causal=False):
    return attention(
        x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
        need_weights=False, is_causal=is_causal,
    )[0]  # fmt: skip


def feed_forward(layer, x):
    return layer.linear2(F.relu(layer.linear1(x)))


def encoder_layer_by_hand(layer, x, mask=None, key_padding_mask=None, is_causal=False):
    """``TransformerEncoderLayer``'s equations with the layer's own submodules."""

    def block(y):
        return attend(layer.self_attn, y, y, mask, key_padding_mask, is_causal)

    if layer.norm_first:
        x = x + block(layer.norm1(x))
        return x + feed_forward(layer, layer.norm2(x))
    x = layer.norm1(x + block(x))
    return layer.norm2(x + feed_forward(layer, x))


def decoder_layer_by_hand(layer, x, memory, tgt_mask, tgt_is_causal, memory_key_padding_mask):
    """``TransformerDecoderLayer``'s equations (post-norm) with the layer's own submodules."""
    x = layer.norm1(x + attend(layer.self_attn, x, x, tgt_mask, None, tgt_is_causal))
    x = layer.norm2(x + attend(layer.multihead_attn, x, memory, None, memory_key_padding_mask))
    return layer.norm3(x + feed_forward(layer, x))


def encoder_layers(batch_first: bool, norm_first: bool = False):
    """A plain encoder layer, and its copy with the normalised attention."""
    plain = randomised(nn.TransformerEncoderLayer(E, H, FF, 0.0, batch_first=batch_first,
                                                  norm_first=norm_first))  # fmt: skip
    lip = randomised(nn.TransformerEncoderLayer(E, H, FF, 0.0, batch_first=batch_first,
                                                norm_first=norm_first))  # fmt: skip
    lip.self_attn = lip_copy(lip.self_attn)
    return plain, lip


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["padding", "causal", "both"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_layer_is_its_equations_with_the_normalised_attention(
    batch_first, mode, kind, norm_first
):
    plain, layer = encoder_layers(batch_first, norm_first)
    x, kwargs = batch(batch_first, L, 1), masks(kind, L)
    kwargs = {("src_mask" if k == "mask" else f"src_{k}" if k != "is_causal" else k): v
              for k, v in kwargs.items()}  # fmt: skip
    got = run(layer, mode, x, **kwargs)
    want = encoder_layer_by_hand(
        layer, x, kwargs.get("src_mask"), kwargs.get("src_key_padding_mask"),
        kwargs.get("is_causal", False),
    )  # fmt: skip
    torch.testing.assert_close(got, want)
    assert not torch.allclose(got, run(plain, mode, x, **kwargs), atol=1e-3)  # not plain


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [True, False])
def test_decoder_layer_is_its_equations_with_the_normalised_attention(batch_first, mode):
    torch.manual_seed(0)
    layer = randomised(nn.TransformerDecoderLayer(E, H, FF, 0.0, batch_first=batch_first))
    layer.self_attn = lip_copy(layer.self_attn)
    layer.multihead_attn = lip_copy(layer.multihead_attn)
    x, memory = batch(batch_first, L, 1), batch(batch_first, S, 2)
    causal = causal_mask(L)
    kwargs = {"tgt_mask": causal, "tgt_is_causal": True, "memory_key_padding_mask": padding(S)}
    got = run(layer, mode, x, memory, **kwargs)
    want = decoder_layer_by_hand(layer, x, memory, causal, True, padding(S))
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_stack_built_from_a_lip_layer(batch_first, mode):
    """Built from a layer that holds the normalised attention, the encoder keeps padded
    batches padded (no nested tensors) and calls every layer."""
    _, layer = encoder_layers(batch_first)
    encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    assert not encoder.use_nested_tensor
    x, mask = batch(batch_first, L, 1), padding(L)
    got = run(encoder, mode, x, src_key_padding_mask=mask)
    want = x
    for each in encoder.layers:
        want = encoder_layer_by_hand(each, want, key_padding_mask=mask)
    torch.testing.assert_close(got, encoder.norm(want))


def transformer(batch_first: bool) -> nn.Transformer:
    model = nn.Transformer(E, H, 2, 2, FF, 0.0, batch_first=batch_first)
    return randomised(model)


def swap_attention(model: nn.Transformer) -> None:
    """Every attention module replaced by hand, as the README shows."""
    for layer in model.encoder.layers:
        layer.self_attn = lip_copy(layer.self_attn)
    for layer in model.decoder.layers:
        layer.self_attn, layer.multihead_attn = (
            lip_copy(layer.self_attn), lip_copy(layer.multihead_attn)
        )  # fmt: skip
    model.encoder.use_nested_tensor = False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer_is_its_layers_composed_by_hand(batch_first, mode):
    model = transformer(batch_first)
    swap_attention(model)
    src, tgt = batch(batch_first, S, 1), batch(batch_first, L, 2)
    causal = causal_mask(L)
    kwargs = {"src_key_padding_mask": padding(S), "memory_key_padding_mask": padding(S)}
    got = run(model, mode, src, tgt, tgt_mask=causal, tgt_is_causal=True, **kwargs)
    memory = src
    for layer in model.encoder.layers:
        memory = encoder_layer_by_hand(layer, memory, key_padding_mask=padding(S))
    memory, out = model.encoder.norm(memory), tgt
    for layer in model.decoder.layers:
        out = decoder_layer_by_hand(layer, out, memory, causal, True, padding(S))
    torch.testing.assert_close(got, model.decoder.norm(out))


def test_swapping_into_a_nested_tensor_encoder_is_a_clear_error():
    """An encoder built around PyTorch's attention turns padded batches into nested tensors
    in inference; the swapped-in layer says what to do instead of computing plain attention."""
    model = transformer(batch_first=True)
    swap_attention(model)
    model.encoder.use_nested_tensor = True
    src, tgt = batch(True, S, 1), batch(True, L, 2)
    with pytest.raises(ValueError, match="use_nested_tensor = False"):
        run(model, "eval no_grad", src, tgt, src_key_padding_mask=padding(S))
