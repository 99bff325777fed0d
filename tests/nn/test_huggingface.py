"""LipschitzNorm in Hugging Face transformers models (tiny random configs, nothing downloaded):
BERT (padding mask), GPT-2 (causal, generation with the key-value cache), ViT and Llama
(grouped-query attention, rotary embeddings) switched by ``lipschitz_normalize``; with
``norm=None`` their outputs are their own, with LipschitzNorm the scores are bounded by alpha
(Corollary 2 on Jacobians, as in test_lipschitz_bounds.py), masks hold, half precision and
``torch.compile`` work. Without transformers the library imports and names the extra."""

import math
import subprocess
import sys
from types import SimpleNamespace

import hf_tiny
import pytest
import torch
from test_lipschitz_bounds import C, check_blow_up, check_head, orthogonal, quadratic_bound

from lipnorm_exp.nn import DenseLipschitzNorm, lipschitz_normalize
from lipnorm_exp.nn.huggingface import (
    ATTENTION_CLASS,
    ATTENTION_NAME,
    lipschitz_attention_forward,
    register_lipschitz_attention,
)

transformers = pytest.importorskip("transformers")

f64 = torch.float64
IDS = torch.tensor([[5, 17, 3, 42, 8, 9], [11, 4, 60, 2, 33, 7]])
PADDING = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])  # the first ends in 2 pads


def bert():
    config = transformers.BertConfig(
        vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=16,
    )  # fmt: skip
    return transformers.BertModel(config)


def gpt2():
    config = transformers.GPT2Config(
        vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=32, bos_token_id=0,
        eos_token_id=1,
    )  # fmt: skip
    return transformers.GPT2LMHeadModel(config)


def llama():
    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
        bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return transformers.LlamaForCausalLM(config)


def vit():
    config = transformers.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        image_size=16, patch_size=8,
    )  # fmt: skip
    return transformers.ViTModel(config)


IMAGES = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
#: model -> (builder, its inputs, the output compared)
MODELS = {
    "bert": (bert, {"input_ids": IDS, "attention_mask": PADDING}, "last_hidden_state"),
    "gpt2": (gpt2, {"input_ids": IDS}, "logits"),
    "llama": (llama, {"input_ids": IDS, "attention_mask": PADDING.flip(1)}, "logits"),
    "vit": (vit, {"pixel_values": IMAGES}, "last_hidden_state"),
}


def built(name, implementation="sdpa", dtype=torch.float32):
    torch.manual_seed(0)
    model = MODELS[name][0]().to(dtype).eval()
    model.set_attn_implementation(implementation)
    return model


def output(model, name, **inputs):
    return getattr(model(**{**MODELS[name][1], **inputs}), MODELS[name][2])


def valid(name):
    """Positions whose outputs mean something (padded queries' outputs are not used)."""
    mask = MODELS[name][1].get("attention_mask")
    return slice(None) if mask is None else mask.bool()


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_without_norm_the_outputs_are_the_models_own(name, implementation):
    """Eager and SDPA paths of the model agree with the attention function without norm."""
    model = built(name, implementation)
    want = output(model, name)
    assert lipschitz_normalize(model, norm=None) is model
    assert model.config._attn_implementation == ATTENTION_NAME
    torch.testing.assert_close(output(model, name)[valid(name)], want[valid(name)])


@pytest.mark.parametrize("name", MODELS)
def test_lipschitz_norm_changes_the_outputs_and_norm_none_restores_them(name):
    model = built(name)
    want = output(model, name)
    lipschitz_normalize(model, alpha=0.5)
    assert not torch.allclose(output(model, name), want, atol=1e-4)
    lipschitz_normalize(model, norm=None)
    torch.testing.assert_close(output(model, name)[valid(name)], want[valid(name)])


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_scores_are_bounded_by_alpha_on_large_inputs(name, alpha):
    """|s_ij| <= alpha: any two weights of a query differ by at most a factor e^(2 alpha), even
    with embeddings scaled by 1e3 (where unnormalised softmax saturates)."""
    model = built(name)
    with torch.no_grad():
        for parameter in model.get_input_embeddings().parameters():
            parameter.mul_(1e3)
    lipschitz_normalize(model, alpha=alpha)
    weights = model(**MODELS[name][1], output_attentions=True).attentions
    for layer in weights:
        kept = layer[layer > 0]  # masked keys get 0
        ratio = layer.amax(dim=-1) / layer.masked_fill(layer == 0, 1.0).amin(dim=-1)
        assert kept.numel() and ratio.max() <= math.exp(2 * alpha) * (1 + 1e-5)


def test_a_padded_token_changes_no_other_output():
    model = built("bert")
    lipschitz_normalize(model)
    other = IDS.clone()
    other[0, 4:] = torch.tensor([50, 51])  # the padded positions
    padded = PADDING.bool()
    torch.testing.assert_close(
        output(model, "bert")[padded], output(model, "bert", input_ids=other)[padded]
    )


@pytest.mark.parametrize("name", ["gpt2", "llama"])
@pytest.mark.parametrize("with_mask", [False, True])
def test_a_later_token_changes_no_earlier_output(name, with_mask):
    """Causal: GPT-2 without a mask leaves causality to the module's ``is_causal``."""
    model = built(name)
    lipschitz_normalize(model)
    mask = {"attention_mask": torch.ones_like(IDS)} if with_mask else {"attention_mask": None}
    other = IDS.clone()
    other[:, 3] = 63
    first, second = output(model, name, **mask), output(model, name, input_ids=other, **mask)
    torch.testing.assert_close(first[:, :3], second[:, :3])
    assert not torch.allclose(first[:, 3:], second[:, 3:])


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_generation_with_the_cache_equals_generation_without(name):
    model = built(name)
    lipschitz_normalize(model)
    prompt = IDS[:1, :4]
    options = {"max_new_tokens": 5, "do_sample": False, "pad_token_id": 0}
    cached = model.generate(prompt, use_cache=True, **options)
    uncached = model.generate(prompt, use_cache=False, **options)
    assert cached.shape == (1, 9)
    torch.testing.assert_close(cached, uncached)
    logits = model(cached).logits  # the cached steps computed what a full pass computes
    assert torch.equal(logits[0, 3:-1].argmax(-1), cached[0, 4:])


def test_a_float_mask_gives_what_the_boolean_mask_gives():
    """transformers' eager masks (0 and the dtype's lowest value) leave the same keys out."""
    model = built("bert")
    lipschitz_normalize(model)
    lowest = torch.finfo(torch.float32).min
    float_mask = (1.0 - PADDING[:, None, None, :].float()) * lowest
    kept = PADDING.bool()
    torch.testing.assert_close(
        output(model, "bert", attention_mask=float_mask)[kept], output(model, "bert")[kept]
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_computed_as_the_other_norms(dtype):
    """The norms are taken in float32 (norms past 181 overflow float16 squared)."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (300 * torch.randn(2, 4, 6, 8, generator=gen) for _ in range(3))
    module = attention_module(alpha=1.0)
    want = lipschitz_attention_forward(module, q, k, v, None)[0]
    got = lipschitz_attention_forward(module, q.to(dtype), k.to(dtype), v.to(dtype), None)[0]
    assert got.dtype == dtype and torch.isfinite(got).all()
    tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2}[dtype]
    assert (got.float() - want).abs().max() <= tol * want.abs().max()
    model = built("bert", dtype=dtype)
    lipschitz_normalize(model)
    assert output(model, "bert").dtype == dtype


def attention_module(alpha, groups=1, causal=False):
    """What the attention function reads of its caller."""
    config = SimpleNamespace(lipschitz_norm_alpha=alpha)
    return SimpleNamespace(config=config, num_key_value_groups=groups, is_causal=causal,
                           training=False)  # fmt: skip


def head_setting(alpha, n, m, **extra):
    """One head as in test_lipschitz_bounds.py: X = (Q || K || V), m queries, n keys."""
    torch.manual_seed(n)
    module = attention_module(alpha)
    q = torch.randn(m, C, dtype=f64)
    keys = torch.randn(n, C, dtype=f64) @ orthogonal(q[0])
    values = torch.randn(n, C, dtype=f64)

    def head(x):
        q, k, v = (t[None, None] for t in (x[:m], x[m : m + n], x[m + n :]))
        return lipschitz_attention_forward(module, q, k, v, None, scaling=C**-0.5, **extra)[0]

    return head, (m + 2 * n, C), lambda t: torch.cat([q, keys, t * values])


@pytest.mark.parametrize(("n", "m"), [(2, 1), (5, 1), (4, 3)])
def test_one_head_within_corollary_2(n, m):
    check_head(*head_setting(1.0, n, m), quadratic_bound(n, m))


def test_one_head_without_norm_exceeds_the_bound():
    check_blow_up(*head_setting(None, 5, 1), quadratic_bound(5))


def test_grouped_keys_serve_their_query_heads():
    """Grouped-query attention: head h reads key and value head h // groups."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(1, 4, 3, 8, generator=gen), *torch.randn(2, 1, 2, 3, 8, generator=gen)
    grouped = lipschitz_attention_forward(attention_module(1.0, groups=2), q, k, v, None)[0]
    full = lipschitz_attention_forward(
        attention_module(1.0), q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), None
    )[0]
    torch.testing.assert_close(grouped, full)


def scores_by_hand(q, k):
    """The model's own scaled scores."""
    return (q @ k.transpose(-2, -1)) * q.size(-1) ** -0.5


def weights_by_hand(s, bias=None, cap=None, sinks=None):
    """Attention weights of scores ``s``, written out: bias, cap, softmax with sinks."""
    s = s if bias is None else s + bias
    s = s if cap is None else cap * torch.tanh(s / cap)
    if sinks is None:
        return s.softmax(-1)
    column = sinks.reshape(1, -1, 1, 1).expand(*s.shape[:-1], 1)
    return torch.cat([s, column], -1).softmax(-1)[..., :-1]


@pytest.mark.parametrize("extra", [{"position_bias": "bias"}, {"softcap": 0.5}, {"s_aux": "sinks"}])
def test_position_bias_softcap_and_sinks_act_as_in_the_model(extra):
    """T5's additive bias, Gemma-2's soft-cap and GPT-OSS's sinks: without the norm the
    model's own weights; with it the same functions of the normalised scores."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 5, 8, generator=gen) for _ in range(3))
    made = {"bias": torch.randn(1, 2, 5, 5, generator=gen), "sinks": torch.randn(2, generator=gen)}
    kwargs = {key: made.get(value, value) for key, value in extra.items()}
    by_hand = {"position_bias": "bias", "softcap": "cap", "s_aux": "sinks"}
    hand = {by_hand[key]: value for key, value in kwargs.items()}
    out, weights = lipschitz_attention_forward(attention_module(None), q, k, v, None, **kwargs)
    torch.testing.assert_close(weights, weights_by_hand(scores_by_hand(q, k), **hand))
    torch.testing.assert_close(out, (weights @ v).transpose(1, 2))
    _, normed = lipschitz_attention_forward(attention_module(1.0), q, k, v, None, **kwargs)
    torch.testing.assert_close(normed, weights_by_hand(DenseLipschitzNorm(1.0)(q, k, v), **hand))


@pytest.mark.parametrize(("n", "m"), [(2, 1), (5, 1), (4, 3)])
def test_soft_capped_head_within_corollary_2(n, m):
    """c tanh(s/c) is 1-Lipschitz and shrinks |s|: the normalised head keeps the bound."""
    head, shape, tie = head_setting(1.0, n, m, softcap=0.5)
    check_head(head, shape, tie, quadratic_bound(n, m))


def biased_bound(n, m, spread):
    """Corollary 2 with a score bias of per-query spread ``spread`` (max - min over keys): each
    softmax weight is at most e^spread times its bound without the bias, so the value term
    e^sqrt(3) sqrt(m / n) is multiplied by e^spread; the bias is constant in the input, so
    the scores' term 2 sqrt(6) is unchanged."""
    return quadratic_bound(n, m) + (math.exp(spread) - 1) * math.exp(math.sqrt(3)) * math.sqrt(
        m / n
    )


def spread_bias(m, n, spread):
    """A fixed (1, 1, m, n) bias whose every row spans ``spread``."""
    rows = torch.rand(m, n, dtype=f64, generator=torch.Generator().manual_seed(1))
    rows = (rows - rows.amin(-1, keepdim=True)) / (rows.amax(-1) - rows.amin(-1))[:, None]
    return (spread * rows)[None, None]


@pytest.mark.parametrize(("n", "m", "spread"), [(2, 1, 0.5), (4, 3, 3.0)])
def test_position_biased_head_within_the_widened_bound(n, m, spread):
    """T5: the bias b is added to the normalised scores."""
    head, shape, tie = head_setting(1.0, n, m, position_bias=spread_bias(m, n, spread))
    check_head(head, shape, tie, biased_bound(n, m, spread))


@pytest.mark.parametrize(("n", "m", "sink"), [(5, 1, 1.5), (4, 3, -2.0)])
def test_head_with_a_sink_is_a_biased_head_with_one_zero_key(n, m, sink):
    """GPT-OSS: a sink logit sigma is one more key with zero key and value and bias sigma
    (its score is 0, and it leaves the norm's maxima as they are), so the head is within
    the widened bound over n + 1 keys with spread |sigma|."""
    head, shape, tie = head_setting(1.0, n, m, s_aux=torch.tensor([sink], dtype=f64))
    bias = torch.zeros(1, 1, m, n + 1, dtype=f64)
    bias[..., -1] = sink
    extended, _, _ = head_setting(1.0, n + 1, m, position_bias=bias)
    x = torch.randn(shape, dtype=f64, generator=torch.Generator().manual_seed(2))
    zero = torch.zeros(1, C, dtype=f64)
    keys, values = x[m : m + n], x[m + n :]
    torch.testing.assert_close(head(x), extended(torch.cat([x[:m], keys, zero, values, zero])))
    check_head(head, shape, tie, biased_bound(n + 1, m, abs(sink)))


def test_a_negligible_additive_mask_leaves_keys_out_of_the_maxima():
    """Swin masks other sub-windows with -100: the norm's maxima skip those keys, as with
    a boolean mask, while without the norm the mask is added as the model adds it."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, 4, 8, generator=gen) for _ in range(3))
    k[..., 3, :] *= 50  # a large key that only the masked position holds
    kept = torch.tensor([True, True, True, False])
    soft = torch.where(kept, 0.0, -100.0)
    module = attention_module(1.0)
    torch.testing.assert_close(
        lipschitz_attention_forward(module, q, k, v, soft)[0],
        lipschitz_attention_forward(module, q, k, v, kept)[0],
    )
    plain = lipschitz_attention_forward(attention_module(None), q, k, v, soft)[1]
    torch.testing.assert_close(plain, (scores_by_hand(q, k) + soft).softmax(-1))


def norm_by_hand(q, k, v, mask, alpha, reachable):
    """Eq. 19 per head and query, the maxima over the keys ``reachable`` marks, then the
    softmax of the normalised scores plus the finite mask over those keys, and the output."""
    u = q.norm(dim=-1, keepdim=True)
    big_k = torch.where(reachable, k.norm(dim=-1)[..., None, :], 0.0).amax(-1, keepdim=True)
    big_v = torch.where(reachable, v.norm(dim=-1)[..., None, :], 0.0).amax(-1, keepdim=True)
    scale = torch.maximum(torch.maximum(u * big_k, u * big_v), big_k * big_v)
    scores = alpha * (q @ k.transpose(-2, -1)) / scale + mask
    weights = scores.masked_fill(~reachable, float("-inf")).softmax(-1)
    return (weights @ v).transpose(1, 2)


def test_swin_shifted_windows_take_the_maxima_over_the_reachable_keys(monkeypatch):
    """A tiny SwinModel, end to end: its shifted-window block masks other sub-windows with
    -100 (plus its relative position bias); the normalised attention equals Eq. 19 by hand
    over the keys with a mask above -50, not the norm over every key of the window."""
    from transformers import AttentionInterface

    config = transformers.SwinConfig(
        image_size=16, patch_size=2, embed_dim=16, depths=[2], num_heads=[2], window_size=4
    )  # 8 x 8 patches, four 4 x 4 windows, the second block shifted by 2
    torch.manual_seed(0)
    model = transformers.SwinModel(config).eval()
    with torch.no_grad():
        for module in model.modules():
            if hasattr(module, "relative_position_bias_table"):
                module.relative_position_bias_table.normal_(0, 0.5)
    lipschitz_normalize(model, alpha=0.5)
    calls = []

    def recorded(module, q, k, v, mask, **kwargs):
        out = lipschitz_attention_forward(module, q, k, v, mask, **kwargs)
        calls.append((q, k, v, mask, out[0]))
        return out

    monkeypatch.setitem(AttentionInterface._global_mapping, ATTENTION_NAME, recorded)
    with torch.no_grad():
        model(pixel_values=IMAGES)
    ((q, k, v, mask, out),) = [call for call in calls if (call[3] <= -50).any()]
    assert len(calls) == 2 and mask.shape[0] == 2 * 4  # two images, four windows each
    reachable = (mask > -50).expand(-1, q.size(1), -1, -1)
    torch.testing.assert_close(out, norm_by_hand(q, k, v, mask, 0.5, reachable))
    every = torch.ones_like(reachable)
    assert not torch.allclose(out, norm_by_hand(q, k, v, mask, 0.5, every), atol=1e-3)


def test_a_model_without_the_attention_interface_is_refused_by_name():
    config = transformers.XGLMConfig(
        vocab_size=64, d_model=32, num_layers=1, attention_heads=4, ffn_dim=64
    )
    model = transformers.XGLMModel(config)
    with pytest.raises(ValueError, match=r"XGLMAttention \(in XGLMModel\) computes"):
        lipschitz_normalize(model)
    assert model.config._attn_implementation != ATTENTION_NAME


def test_models_inside_a_module_are_switched_and_counted(caplog):
    holder = torch.nn.ModuleDict(
        {"text": built("bert"), "image": built("vit"), "mix": torch.nn.MultiheadAttention(8, 2)}
    )
    with caplog.at_level("INFO", logger="lipnorm_exp.nn.convert"):
        lipschitz_normalize(holder)
    assert "1 BertModel, 1 MultiheadAttention, 1 ViTModel" in caplog.text
    assert holder["text"].config._attn_implementation == ATTENTION_NAME
    assert holder["image"].config._attn_implementation == ATTENTION_NAME


@pytest.mark.slow
def test_torch_compile_gives_the_eager_outputs():
    model = built("bert")
    lipschitz_normalize(model)
    compiled = torch.compile(model, fullgraph=True)
    torch.testing.assert_close(output(compiled, "bert"), output(model, "bert"))


def test_the_library_imports_without_transformers_and_names_the_extra():
    probe = (
        "import sys; sys.modules['transformers'] = None\n"
        "import lipnorm_exp.nn as nn\n"
        "from lipnorm_exp.nn.huggingface import register_lipschitz_attention\n"
        "try:\n"
        "    register_lipschitz_attention()\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "pip install 'lipnorm_exp[hf]'" in done.stdout


def test_the_registered_name_alone_gives_lipschitz_norm_with_alpha_1():
    """A model set to the name by hand (as ``from_pretrained(..., attn_implementation=...)``
    does) gets LipschitzNorm with its default alpha, not unnormalised scores."""
    register_lipschitz_attention()
    by_name = built("bert", ATTENTION_NAME)
    by_call = lipschitz_normalize(built("bert"), alpha=1.0)
    torch.testing.assert_close(output(by_name, "bert"), output(by_call, "bert"))
    assert not torch.allclose(output(by_name, "bert"), output(built("bert"), "bert"), atol=1e-4)


@pytest.mark.parametrize("given", ["config", "class"])
def test_a_bert_config_or_the_bert_class_is_refused_in_one_line(given):
    """What a Hugging Face user may pass instead of a built model: its config, or its class."""
    config = transformers.BertConfig(hidden_size=8, num_attention_heads=2, num_hidden_layers=1)
    value = config if given == "config" else transformers.BertModel
    with pytest.raises(TypeError, match=r"^lipschitz_normalize takes a torch.nn.Module") as error:
        lipschitz_normalize(value)
    assert "\n" not in str(error.value)
    named = "BertConfig" if given == "config" else "the class BertModel"
    assert named in str(error.value)


def tiny_model(model_type):
    """A tiny random model of an installed architecture (tests/nn/hf_tiny.py), or a skip."""
    built = hf_tiny.tiny(model_type)
    if built is None:
        pytest.skip(f"no tiny {model_type} in this transformers")
    return built[0]


def test_a_decoder_whose_attention_is_not_marked_causal_keeps_its_causal_mask():
    """NLLB-MoE's decoder self-attention holds is_causal=False and leaves causality to its
    mask: the mask is always materialised, so norm=None gives the model's own outputs."""
    model = tiny_model("nllb-moe")
    inputs = {"input_ids": IDS, "decoder_input_ids": IDS[:, :5]}
    with torch.no_grad():
        want = model(**inputs).last_hidden_state
        lipschitz_normalize(model, norm=None)
        torch.testing.assert_close(model(**inputs).last_hidden_state, want)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (
            lambda: transformers.LongT5EncoderModel(
                transformers.LongT5Config(
                    d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4, vocab_size=64
                )
            ),
            "LongT5LocalAttention .* without transformers' AttentionInterface",
        ),
        (
            lambda: transformers.models.chameleon.modeling_chameleon.ChameleonVQVAE(
                transformers.ChameleonVQVAEConfig(
                    embed_dim=8,
                    num_embeddings=16,
                    latent_channels=8,
                    base_channels=32,
                    channel_multiplier=[1, 2],
                    num_res_blocks=1,
                    attn_resolutions=[8],
                    resolution=16,
                )  # fmt: skip
            ),
            r"ChameleonVQVAEEncoderAttnBlock \(in ChameleonVQVAE\) computes its attention "
            "without transformers' AttentionInterface",
        ),
        (
            lambda: tiny_model("inkling2_text"),
            r"Inkling2\w+Attention \(in Inkling2TextModel\) computes its attention sinks from "
            r"the input \(sink_proj\)",
        ),
    ],
)
def test_a_model_the_norm_would_not_reach_is_refused_at_conversion(build, match):
    model = build()
    with pytest.raises(ValueError, match=match):
        lipschitz_normalize(model)
    assert model.config._attn_implementation != ATTENTION_NAME


def test_every_installed_class_named_for_attention_is_one_the_coverage_check_looks_at():
    """Image tokenizers name theirs ``...AttnBlock`` (Chameleon, Janus): the check takes every
    ``Attention`` and ``Attn`` class of the installed library but the speech adapters."""
    import importlib
    import inspect
    import pkgutil

    named = []
    for found in pkgutil.iter_modules(transformers.models.__path__):
        try:
            module = importlib.import_module(
                f"transformers.models.{found.name}.modeling_{found.name}"
            )
        except Exception:  # noqa: BLE001, S112 (a model package with no modeling module, or extras)
            continue
        named += [
            name
            for name, cls in vars(module).items()
            if inspect.isclass(cls) and issubclass(cls, torch.nn.Module) and "attn" in name.lower()
        ]
    caught = [name for name in named if ATTENTION_CLASS.search(name)]
    assert "ChameleonVQVAEEncoderAttnBlock" in caught and "JanusVQVAEAttnBlock" in caught
    assert all(name.endswith("AttnAdapterLayer") for name in set(named) - set(caught))


NO_ATTENTION = {
    "mamba": lambda: transformers.MambaModel(
        transformers.MambaConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, state_size=4)
    ),
    "fnet": lambda: transformers.FNetModel(
        transformers.FNetConfig(
            vocab_size=64, hidden_size=16, num_hidden_layers=1, intermediate_size=32
        )  # fmt: skip
    ),
    "resnet": lambda: transformers.ResNetModel(
        transformers.ResNetConfig(hidden_sizes=[8, 8], depths=[1, 1])
    ),
}


@pytest.mark.parametrize("name", NO_ATTENTION)
def test_a_model_without_attention_is_refused_or_with_strict_false_warned_once(name, caplog):
    model = NO_ATTENTION[name]()
    before = model.config._attn_implementation
    with pytest.raises(ValueError, match=r"Model has no attention module to normalise \(strict"):
        lipschitz_normalize(model)
    with caplog.at_level("INFO", logger="lipnorm_exp.nn.convert"):
        with pytest.warns(UserWarning) as warned:
            assert lipschitz_normalize(model, strict=False) is model
    assert len(warned) == 1
    assert f"left without attention: {type(model).__name__}" in str(warned[0].message)
    assert "switched" not in caplog.text and not caplog.records
    assert model.config._attn_implementation == before
    assert not hasattr(model.config, "lipschitz_norm_alpha")


def test_with_strict_false_a_container_switches_its_attention_and_names_the_rest(caplog):
    holder = torch.nn.ModuleDict({"text": built("bert"), "mixer": NO_ATTENTION["fnet"]()})
    with caplog.at_level("INFO", logger="lipnorm_exp.nn.convert"):
        with pytest.warns(UserWarning, match=r"1 BertModel switched; left without attention: FNet"):
            lipschitz_normalize(holder, strict=False)
    assert "1 BertModel" in caplog.text and "FNet" not in caplog.text
    assert holder["text"].config._attn_implementation == ATTENTION_NAME
    assert holder["mixer"].config._attn_implementation != ATTENTION_NAME
    with pytest.raises(ValueError, match="FNetModel has no attention module"):
        lipschitz_normalize(torch.nn.ModuleDict({"text": built("bert"), "mixer": holder["mixer"]}))


def test_a_refused_container_is_left_as_it_was():
    """All or nothing: XGLM's refusal leaves BERT and the nn.MultiheadAttention unchanged."""
    config = transformers.XGLMConfig(
        vocab_size=64, d_model=32, num_layers=1, attention_heads=4, ffn_dim=64
    )
    mha = torch.nn.MultiheadAttention(8, 2)
    holder = torch.nn.ModuleDict(
        {"text": built("bert"), "mix": mha, "xglm": transformers.XGLMModel(config)}
    )
    with pytest.raises(ValueError, match=r"XGLMAttention \(in XGLMModel\) computes"):
        lipschitz_normalize(holder)
    assert holder["text"].config._attn_implementation == "sdpa"
    assert holder["mix"] is mha


def test_norm_none_undoes_every_swap_of_an_earlier_call():
    """SigLIP's pooling head holds an nn.MultiheadAttention: norm=None restores it too."""
    config = transformers.SiglipVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
        image_size=16, patch_size=8,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.SiglipVisionModel(config).eval()
    want = model(pixel_values=IMAGES).pooler_output
    lipschitz_normalize(model, alpha=0.5)
    assert not torch.allclose(model(pixel_values=IMAGES).pooler_output, want, atol=1e-4)
    lipschitz_normalize(model, norm=None)
    torch.testing.assert_close(model(pixel_values=IMAGES).pooler_output, want)


def test_two_models_sharing_a_config_keep_their_own_alpha():
    first = built("bert")
    second = transformers.BertModel(first.config).eval()
    lipschitz_normalize(first, alpha=0.5)
    lipschitz_normalize(second, norm=None)
    assert first.config.lipschitz_norm_alpha == 0.5
    assert second.config.lipschitz_norm_alpha is None


def test_a_saved_model_reloads_normalised_with_its_alpha(tmp_path):
    model = lipschitz_normalize(built("bert"), alpha=0.5)
    model.save_pretrained(tmp_path)
    register_lipschitz_attention()
    again = transformers.BertModel.from_pretrained(tmp_path, attn_implementation=ATTENTION_NAME)
    assert again.config.lipschitz_norm_alpha == 0.5
    torch.testing.assert_close(output(again.eval(), "bert"), output(model, "bert"))
    plain = transformers.BertModel.from_pretrained(tmp_path).eval()  # as the docs warn
    assert plain.config.lipschitz_norm_alpha == 0.5
    assert plain.config._attn_implementation != ATTENTION_NAME
    torch.testing.assert_close(output(plain, "bert"), output(built("bert"), "bert"))
