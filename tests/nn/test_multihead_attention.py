"""LipschitzMultiheadAttention: torch.nn.MultiheadAttention's state dict loads and, with
``norm=None``, both compute the same outputs and weights for every input form and mask;
with ``norm="lip"`` the scores are Eq. (19) per query and head over the unmasked keys."""

import pytest
import torch
from conftest import assert_reset_parameters_redraws
from torch import nn

from lipnorm_exp.nn import DenseLipschitzNorm, LipschitzMultiheadAttention

E, H, L, S, N = 8, 2, 5, 6, 3


def twins(**options):
    """nn.MultiheadAttention with random biases, and ours with its state dict loaded."""
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(E, H, **options)
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if name.endswith("bias") or name.startswith("bias_"):
                p.normal_()
    ours = LipschitzMultiheadAttention(E, H, **options)
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def inputs(batch_first, kdim=E, vdim=E):
    gen = torch.Generator().manual_seed(1)
    query = torch.randn(N, L, E, generator=gen)
    key, value = torch.randn(N, S, kdim, generator=gen), torch.randn(N, S, vdim, generator=gen)
    if batch_first:
        return query, key, value
    return query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)


def masks(kind):
    """``(attn_mask, key_padding_mask)``; every query keeps at least one key."""
    gen = torch.Generator().manual_seed(2)
    blocked = torch.rand(L, S, generator=gen) > 0.6
    blocked[:, 0] = False
    padding = torch.zeros(N, S, dtype=torch.bool)
    padding[0, -2:] = padding[2, 3] = True
    float_mask = torch.randn(L, S, generator=gen).masked_fill(blocked, float("-inf"))
    per_head = torch.rand(N * H, L, S, generator=gen) > 0.6
    per_head[..., 0] = False
    return {
        "none": (None, None),
        "bool": (blocked, None),
        "float": (float_mask, None),
        "padding": (None, padding),
        "float padding": (None, torch.zeros(N, S).masked_fill(padding, float("-inf"))),
        "both": (blocked, padding),
        "per head": (per_head, padding),
    }[kind]


def assert_same(got, want):
    torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-6)
    if want[1] is None:
        assert got[1] is None
    else:
        torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-6)


MASKS = ["none", "bool", "float", "padding", "float padding", "both", "per head"]


@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize(("need_weights", "average"), [(True, True), (True, False), (False, True)])
def test_equals_torch_without_norm(batch_first, kind, need_weights, average):
    ours, ref = twins(batch_first=batch_first)
    ours.eval(), ref.eval()
    attn_mask, key_padding_mask = masks(kind)
    args = inputs(batch_first)
    kwargs = {
        "key_padding_mask": key_padding_mask,
        "attn_mask": attn_mask,
        "need_weights": need_weights,
        "average_attn_weights": average,
    }
    assert_same(ours(*args, **kwargs), ref(*args, **kwargs))


@pytest.mark.parametrize(
    "options",
    [
        {"bias": False},
        {"kdim": 3, "vdim": 7},
        {"add_bias_kv": True},
        {"add_zero_attn": True},
        {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3},
    ],
    ids=str,
)
def test_every_option_equals_torch(options):
    ours, ref = twins(batch_first=True, **options)
    assert set(ours.state_dict()) == set(ref.state_dict())
    args = inputs(True, options.get("kdim", E), options.get("vdim", E))
    attn_mask, key_padding_mask = masks("both")
    kwargs = {"key_padding_mask": key_padding_mask, "attn_mask": attn_mask}
    assert_same(ours(*args, **kwargs), ref(*args, **kwargs))


def test_self_attention_unbatched_and_causal_equal_torch():
    ours, ref = twins()
    x = torch.randn(L, E)
    causal = nn.Transformer.generate_square_subsequent_mask(L)
    for kwargs in ({}, {"attn_mask": causal, "is_causal": True}):
        assert_same(ours(x, x, x, **kwargs), ref(x, x, x, **kwargs))
    assert ours(x, x, x)[1].shape == (L, L)
    assert ours(x, x, x, average_attn_weights=False)[1].shape == (H, L, L)


def test_same_seed_gives_torchs_initial_weights():
    for bias in (True, False):
        torch.manual_seed(3)
        ref = nn.MultiheadAttention(E, H, bias=bias, add_bias_kv=True, kdim=4)
        torch.manual_seed(3)
        ours = LipschitzMultiheadAttention(E, H, bias=bias, add_bias_kv=True, kdim=4)
        for (name, p), q in zip(ref.state_dict().items(), ours.state_dict().values(), strict=True):
            assert torch.equal(p, q), name


def test_attention_dropout_equals_torch_in_training():
    ours, ref = twins(batch_first=True, dropout=0.5)
    args = inputs(True)
    torch.manual_seed(4)
    got = ours(*args)
    torch.manual_seed(4)
    assert_same(got, ref(*args))
    assert (got[1] == 0).any()  # some weights were dropped


def test_reset_parameters_draws_new_weights():
    assert_reset_parameters_redraws(LipschitzMultiheadAttention(E, H, add_bias_kv=True, kdim=3))


def fully_masked():
    """``(attn_mask, key_padding_mask)``: query 0 may attend to nothing, nor may sequence 1."""
    attn_mask = torch.zeros(L, S, dtype=torch.bool)
    attn_mask[0] = True
    padding = torch.zeros(N, S, dtype=torch.bool)
    padding[1] = True
    return attn_mask, padding


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_fully_masked_queries_give_what_torch_gives(need_weights, training):
    """With ``need_weights=False`` a query without keys attends to nothing (its head output is
    0, the output the projection's bias) and the gradients stay finite; with weights, both
    modules give NaN weights and outputs for it."""
    ours, ref = twins(batch_first=True)
    ours.train(training), ref.train(training)
    query, key, value = (t.requires_grad_() for t in inputs(True))
    attn_mask, key_padding_mask = fully_masked()
    kwargs = {"attn_mask": attn_mask, "key_padding_mask": key_padding_mask}
    got = ours(query, key, value, need_weights=need_weights, **kwargs)
    want = ref(query, key, value, need_weights=need_weights, **kwargs)
    torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-6, equal_nan=True)
    if need_weights:
        torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-6, equal_nan=True)
        assert got[1][1].isnan().all() and got[1][0, 0].isnan().all()
        return
    torch.testing.assert_close(got[0][1], ours.out_proj.bias.expand(L, E))
    lip = LipschitzMultiheadAttention(E, H, batch_first=True, norm="lip")
    lip.load_state_dict(ours.state_dict())
    out = lip(query, key, value, need_weights=False, **kwargs)[0]
    torch.testing.assert_close(out[1], ours.out_proj.bias.expand(L, E))
    grads = torch.autograd.grad(out.sum(), [query, key, value, *lip.parameters()])
    assert all(g.isfinite().all() for g in grads)


@pytest.mark.parametrize("norm", [None, "lip"])
@pytest.mark.parametrize(
    "options",
    [{"batch_first": True}, {"kdim": 3, "vdim": 7}, {"add_bias_kv": True, "add_zero_attn": True}],
    ids=str,
)
def test_scripted_module_gives_the_eager_outputs(options, norm):
    torch.manual_seed(9)
    layer = LipschitzMultiheadAttention(E, H, dropout=0.5, **options, norm=norm).eval()
    scripted = torch.jit.script(layer)
    args = inputs(options.get("batch_first", False), options.get("kdim", E), options.get("vdim", E))
    for kind in ("none", "both", "per head"):
        attn_mask, key_padding_mask = masks(kind)
        for need_weights, average in ((True, True), (True, False), (False, True)):
            kwargs = {
                "key_padding_mask": key_padding_mask,
                "need_weights": need_weights,
                "attn_mask": attn_mask,
                "average_attn_weights": average,
            }
            assert_same(scripted(*args, **kwargs), layer(*args, **kwargs))
    unbatched = [t[:, 0] if not options.get("batch_first") else t[0] for t in args]
    assert_same(scripted(*unbatched), layer(*unbatched))


def test_nested_tensor_inputs_are_a_clear_error():
    layer = LipschitzMultiheadAttention(E, H, batch_first=True)
    x = torch.nested.nested_tensor([torch.randn(2, E), torch.randn(3, E)], layout=torch.jagged)
    with pytest.raises(ValueError, match="takes padded tensors, not nested tensors") as info:
        layer(x, x, x)
    assert type(info.value) is ValueError


# ---- norm="lip" ---------------------------------------------------------------------------


def test_dense_norm_matches_eq_19_by_hand():
    """Per query i: u = |q_i|, v and w the largest key and value norms over the keys the mask
    leaves to i; a finite mask entry is added to the normalised score."""
    gen = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, H, n, 3, generator=gen, dtype=torch.float64) for n in (L, S, S))
    mask = torch.randn(2, 1, L, S, generator=gen, dtype=torch.float64)
    mask = mask.masked_fill(torch.rand(2, 1, L, S, generator=gen) > 0.6, float("-inf"))
    mask[..., 0] = 0.0
    got = DenseLipschitzNorm(alpha=1.5)(q, k, v, mask)
    for b in range(2):
        for h in range(H):
            for i in range(L):
                keep = [j for j in range(S) if mask[b, 0, i, j] > float("-inf")]
                u = q[b, h, i].norm()
                vn = max(k[b, h, j].norm() for j in keep)
                wn = max(v[b, h, j].norm() for j in keep)
                scale = max(u * vn, u * wn, vn * wn) + 1e-12
                for j in range(S):
                    want = 1.5 * q[b, h, i] @ k[b, h, j] / scale + mask[b, 0, i, j]
                    torch.testing.assert_close(got[b, h, i, j], want)


@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("scale", [1e-3, 1e3])
def test_lip_weights_do_not_change_when_the_inputs_are_scaled(kind, scale):
    torch.manual_seed(6)
    layer = LipschitzMultiheadAttention(E, H, bias=False, batch_first=True, norm="lip")
    attn_mask, key_padding_mask = masks(kind)
    args = inputs(True)
    kwargs = {"key_padding_mask": key_padding_mask, "attn_mask": attn_mask}
    _, weights = layer(*args, average_attn_weights=False, **kwargs)
    _, scaled = layer(*(scale * t for t in args), average_attn_weights=False, **kwargs)
    torch.testing.assert_close(scaled, weights, rtol=1e-4, atol=1e-6)
    plain = LipschitzMultiheadAttention(E, H, bias=False, batch_first=True)
    plain.load_state_dict(layer.state_dict())
    _, unscaled = plain(*(scale * t for t in args), average_attn_weights=False, **kwargs)
    assert not torch.allclose(unscaled, weights, atol=1e-3)  # without the norm they do


def test_lip_ignores_masked_keys():
    """A padded key, however large, changes nothing: the output is that of the shorter
    sequence (the maxima run over the unmasked keys only)."""
    torch.manual_seed(7)
    layer = LipschitzMultiheadAttention(E, H, batch_first=True, norm="lip")
    query, key, value = inputs(True)
    padding = torch.zeros(N, S, dtype=torch.bool)
    padding[:, -2:] = True
    big_key, big_value = key.clone(), value.clone()
    big_key[:, -2:] *= 1e4
    big_value[:, -2:] *= 1e4
    got, weights = layer(query, big_key, big_value, key_padding_mask=padding)
    want, want_weights = layer(query, key[:, :-2], value[:, :-2])
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(weights[..., :-2], want_weights)
    assert not weights[..., -2:].any()


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_lip_scores_are_bounded_by_alpha(scale):
    torch.manual_seed(8)
    q, k, v = (scale * torch.randn(N, H, n, 4) for n in (L, S, S))
    assert DenseLipschitzNorm(alpha=2.0)(q, k, v).abs().max() <= 2.0 + 1e-5
    assert (q @ k.transpose(-2, -1)).abs().max() > 0.1 * scale**2  # the raw scores are not


def test_lip_at_zero_inputs_stays_finite():
    layer = LipschitzMultiheadAttention(E, H, bias=False, norm="lip")
    x = torch.zeros(L, N, E, requires_grad=True)
    out, weights = layer(x, x, x)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    (grad,) = torch.autograd.grad(out.sum() + weights.pow(2).sum(), x)
    assert torch.isfinite(grad).all()


# ---- arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"embed_dim": 0}, "embed_dim must be an integer >= 1, got 0"),
        ({"num_heads": 1.5}, "num_heads must be an integer >= 1, got 1.5"),
        ({"num_heads": 0}, "num_heads must be an integer >= 1, got 0"),
        ({"kdim": -3}, "kdim must be an integer >= 1, got -3"),
        ({"num_heads": 3}, "embed_dim=8 must be a multiple of num_heads=3"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
        (
            {"norm": "lipschitz"},
            "unknown norm 'lipschitz'; allowed: none, lip, or a DenseScoreNorm",
        ),
    ],
)
def test_invalid_arguments_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        LipschitzMultiheadAttention(**{"embed_dim": E, "num_heads": H, **kwargs})
    assert type(info.value) is ValueError


def test_a_norm_that_is_no_dense_score_norm_is_a_type_error_naming_what_it_lacks():
    message = (
        "LipschitzMultiheadAttention: norm LayerNorm is not a DenseScoreNorm: __call__ does not "
        r"take \(query, key, value, mask\); has no alpha; has no denominator"
    )
    with pytest.raises(TypeError, match=f"^{message}$"):
        LipschitzMultiheadAttention(E, H, norm=torch.nn.LayerNorm(E))


@pytest.mark.parametrize("norm", [None, "lip"])
@pytest.mark.parametrize(("queries", "keys"), [(0, S), (L, 0), (0, 0)])
def test_a_zero_length_sequence_works_as_in_torch(norm, queries, keys):
    torch.manual_seed(0)
    reference = nn.MultiheadAttention(E, H, batch_first=True)
    layer = LipschitzMultiheadAttention(E, H, batch_first=True, norm=norm)
    layer.load_state_dict(reference.state_dict())
    query, key = torch.randn(N, queries, E), torch.randn(N, keys, E)
    got, want = layer(query, key, key), reference(query, key, key)
    for ours, theirs in zip(got, want, strict=True):
        torch.testing.assert_close(ours, theirs)


def test_invalid_norm_options_are_value_errors():
    with pytest.raises(ValueError, match="DenseLipschitzNorm: alpha must be a finite number > 0"):
        DenseLipschitzNorm(alpha=-1.0)
    with pytest.raises(ValueError, match="DenseLipschitzNorm: eps must be a finite number > 0"):
        DenseLipschitzNorm(eps=-1.0)


def test_invalid_masks_are_value_errors():
    layer = LipschitzMultiheadAttention(E, H)
    x = torch.randn(L, N, E)
    with pytest.raises(ValueError, match="attn_mask must be 2-D or 3-D"):
        layer(x, x, x, attn_mask=torch.zeros(1, 1, L, L))
    with pytest.raises(ValueError, match="is_causal needs attn_mask"):
        layer(x, x, x, is_causal=True)


def test_repr():
    assert (
        repr(LipschitzMultiheadAttention(E, H))
        == "LipschitzMultiheadAttention(8, num_heads=2, norm=none)"
    )
    lip = LipschitzMultiheadAttention(E, H, norm=DenseLipschitzNorm(alpha=0.5))
    assert repr(lip) == (
        "LipschitzMultiheadAttention(8, num_heads=2, norm=DenseLipschitzNorm(alpha=0.5))"
    )
