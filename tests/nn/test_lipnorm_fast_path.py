"""The optimised LipschitzNorm path against the straightforward formula it replaces.

The reference below gathers per-edge values with advanced indexing and takes neighbourhood
maxima with ``scatter_reduce(amax)`` under autograd, as the modules first did. The optimised
path must give the same outputs and gradients (inputs and all parameters) to float tolerance,
in float32 (value and row packed into one integer key) and float64 (two integer scatters), on
random graphs with several heads, nodes without in-edges, all-zero feature rows and ties.

At a tie the maximum is not differentiable: ``amax`` splits the gradient evenly among the
maximisers, the optimised path gives it all to the one with the largest index. Both are
subgradients; the tests check that the difference is exactly that.
"""

import math
import threading

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck
from torch.linalg import vector_norm

from lipnorm_exp.nn import (
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    GTLipschitzNorm,
    ScoreLipschitzNorm,
)
from lipnorm_exp.nn.lipschitz_norm import (
    fused_squared_norms,
    neighbourhood_max,
    squared_norm,
    target_max,
)

N, F_IN, H, C = 12, 6, 3, 4
ISOLATED = (10, 11)  # no in-edges (the layers give them a self-loop)
ZERO_ROWS = (3, 7)  # all-zero features
TWINS = {5: 4, 9: 8}  # row -> the row it copies: equal norms, ties in the maxima
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(autouse=True)
def seeded():
    """Every test draws the same random weights whatever ran before it."""
    torch.manual_seed(0)


TOL = {torch.float32: {"rtol": 2e-4, "atol": 1e-5}, torch.float64: {"rtol": 1e-9, "atol": 1e-11}}


# ---- the straightforward formula -------------------------------------------------------------


def ref_target_max(edge_values, index, num_nodes):
    shape = (-1,) + (1,) * (edge_values.dim() - 1)
    out = edge_values.new_zeros((num_nodes, *edge_values.shape[1:]))
    return out.scatter_reduce(
        0, index.view(shape).expand_as(edge_values), edge_values, "amax", include_self=False
    )


def ref_neighbourhood_max(values, edge_index, num_nodes):
    return ref_target_max(values[edge_index[0]], edge_index[1], num_nodes)


def ref_sqrt(x):
    return x.clamp_min(torch.finfo(x.dtype).tiny).sqrt()


def one_graph(x):
    """The features of a graph that is not bipartite: the layers pass them as ``(x, x)``."""
    if isinstance(x, tuple):
        assert x[0] is x[1]
        return x[0]
    return x


class RefGATNorm(GATLipschitzNorm):
    def forward(self, score, x, att, edge_index, edge_attr=None, num_targets=None):
        if self.variant == "paper":
            return self.alpha * score / self.denominator(x, att, edge_index)[edge_index[1]]
        x = one_graph(x)
        assert edge_attr is None and num_targets in (None, x.size(0))
        src, dst = edge_index
        x_sq, att_sq = x.pow(2).sum(-1), att.pow(2).sum(-1)
        max_sq = ref_neighbourhood_max(x_sq, edge_index, x.size(0))
        scale = 4.0 * ref_sqrt(att_sq * (max_sq[dst] + x_sq[src]))
        return self.alpha * score / (scale + self.eps)

    def denominator(self, x, att, edge_index, edge_attr=None, num_targets=None):
        if self.variant != "paper":
            return None
        x = one_graph(x)
        assert edge_attr is None and num_targets in (None, x.size(0))
        x_sq, att_sq = x.pow(2).sum(-1), att.pow(2).sum(-1)
        max_sq = ref_neighbourhood_max(x_sq, edge_index, x.size(0))
        return ref_sqrt(att_sq * (x_sq + max_sq)) + self.eps


class RefGTNorm(GTLipschitzNorm):
    def forward(self, score, query, key, value, edge_index, edge_attr=None):
        assert edge_attr is None
        return self.alpha * score / self.denominator(query, key, value, edge_index)[edge_index[1]]

    def denominator(self, query, key, value, edge_index, per_edge=False):
        dst = edge_index[1]
        u = vector_norm(query, dim=-1)
        if self.variant == "published":
            u = vector_norm(u[dst], dim=0)
        norms = torch.stack([vector_norm(key, dim=-1), vector_norm(value, dim=-1)], dim=-1)
        if per_edge:
            v, w = ref_target_max(norms, dst, query.size(0)).unbind(-1)
        else:
            v, w = ref_neighbourhood_max(norms, edge_index, query.size(0)).unbind(-1)
        denominator = torch.maximum(torch.maximum(u * v, u * w), v * w) + self.eps
        if self.variant == "published":
            return denominator * math.sqrt(query.size(-1))
        return denominator


class RefScoreNorm(ScoreLipschitzNorm):
    def forward(self, score, x, lipschitz, edge_index, edge_attr=None):
        assert edge_attr is None
        x = one_graph(x)
        dst = edge_index[1]
        x_sq = x.pow(2).sum(-1).unsqueeze(-1)
        row_norm = ref_sqrt(x_sq + ref_neighbourhood_max(x_sq, edge_index, x.size(0)))
        score_max = ref_target_max(score.abs(), dst, x.size(0))
        scale = torch.maximum(score_max, row_norm * lipschitz)
        return self.alpha * score / (scale[dst] + self.eps)


REFERENCE = {GATLipschitzNorm: RefGATNorm, GTLipschitzNorm: RefGTNorm}


# ---- graphs and inputs -----------------------------------------------------------------------


def random_graph(seed, loops):
    """Random edges into nodes 0..9 (duplicates allowed), none into ISOLATED; with ``loops``
    every non-isolated node also has its self-loop, as the layers give it."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, N, (40,), generator=gen)
    dst = torch.randint(0, N - len(ISOLATED), (40,), generator=gen)
    edges = torch.stack([src, dst])
    if loops:
        nodes = torch.arange(N - len(ISOLATED))
        edges = torch.cat([edges, torch.stack([nodes, nodes])], dim=1)
    return edges


def node_features(shape, dtype, seed, twins=False):
    """Random rows with ZERO_ROWS zeroed and, with ``twins``, rows copied as TWINS says."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    x[list(ZERO_ROWS)] = 0.0
    if twins:
        for row, twin in TWINS.items():
            x[row] = x[twin]
    return x


def leaf(t):
    return t.detach().clone().requires_grad_()


def gradients(out, inputs, weight):
    return torch.autograd.grad((out * weight).sum(), inputs, allow_unused=True)


def assert_same(got, want, dtype):
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None or not g.abs().any()
        else:
            torch.testing.assert_close(g, w, **TOL[dtype])


# ---- the maxima themselves -------------------------------------------------------------------


def routed(weight, values, rows, index, num_nodes):
    """Gradient of ``(max * weight).sum()`` w.r.t. ``values`` when each target's maximum
    sends its whole weight to the largest row among its maximisers."""
    flat = values.reshape(values.size(0), -1)
    maxima = ref_target_max(flat[rows], index, num_nodes)
    want = torch.zeros_like(flat)
    for target in range(num_nodes):
        offered = rows[index == target]
        for col in range(flat.size(1)):
            if offered.numel():
                tied = offered[flat[offered, col] == maxima[target, col]]
                want[tied.max(), col] += weight.reshape(num_nodes, -1)[target, col]
    return want.view_as(values)


@pytest.mark.parametrize("dtype", [torch.float16, *DTYPES])
def test_neighbourhood_max_values_and_gradient_route(dtype):
    edge_index = torch.cat([random_graph(0, loops=False), torch.tensor([[2, 6], [0, 0]])], 1)
    values = torch.rand(N, H, 2, generator=torch.Generator().manual_seed(1)).to(dtype)
    values[2] = values[6] = 2.0  # node 0's maximum is a tie
    values[3] = 0.0
    values[4, 0, 0] = 1e4 if dtype == torch.float16 else 1e30  # far apart magnitudes
    weight = torch.randn(N, H, 2, generator=torch.Generator().manual_seed(2)).to(dtype)
    got_in, ref_in = leaf(values), leaf(values)
    got = neighbourhood_max(got_in, edge_index, N)
    want = ref_neighbourhood_max(ref_in, edge_index, N)
    assert torch.equal(got, want)
    assert not got[list(ISOLATED)].any()
    (got_g,) = gradients(got, [got_in], weight)
    (even,) = gradients(want, [ref_in], weight)
    # half precision: the routed weights are summed in another order than autograd's scatter
    tol = {"rtol": 1e-2, "atol": 1e-3} if dtype == torch.float16 else {}
    torch.testing.assert_close(got_g, routed(weight, values, *edge_index, N), **tol)
    assert not torch.equal(got_g, even)  # the graph does have ties


@pytest.mark.parametrize("dtype", DTYPES)
def test_neighbourhood_max_under_vmap_equals_each_copy(dtype):
    """Seeds trained together (torch.func.vmap over stacked copies): each copy's own maxima,
    values and gradients, on every torch the package supports (torch < 2.13 cannot batch
    ``Tensor.view(dtype)``)."""
    edge_index = random_graph(0, loops=False)
    values = torch.rand(3, N, H, 2, generator=torch.Generator().manual_seed(1)).to(dtype)
    weight = torch.randn(3, N, H, 2, generator=torch.Generator().manual_seed(2)).to(dtype)
    batched_in, alone_in = leaf(values), leaf(values)
    got = torch.func.vmap(lambda copy: neighbourhood_max(copy, edge_index, N))(batched_in)
    want = torch.stack([neighbourhood_max(copy, edge_index, N) for copy in alone_in])
    assert torch.equal(got, want)
    (got_grad,) = gradients(got, [batched_in], weight)
    (want_grad,) = gradients(want, [alone_in], weight)
    assert torch.equal(got_grad, want_grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_target_max_values_and_gradient_route(dtype):
    index = random_graph(2, loops=False)[1]
    edge_values = torch.rand(index.numel(), H, dtype=dtype)
    edge_values[index == index[0]] = 2.0  # index[0]'s maximum is a tie (of at least 2 edges)
    weight = torch.randn(N, H, dtype=dtype)
    got_in = leaf(edge_values)
    got = target_max(got_in, index, N)
    assert torch.equal(got, ref_target_max(edge_values, index, N))
    (got_g,) = gradients(got, [got_in], weight)
    rows = torch.arange(index.numel())
    torch.testing.assert_close(got_g, routed(weight, edge_values, rows, index, N))


@pytest.mark.parametrize("dtype", DTYPES)
def test_squared_norm_gradients_forward_mode_and_second_order(dtype):
    x = node_features((N, H, C), dtype, 3)
    torch.testing.assert_close(squared_norm(x), x.pow(2).sum(-1), **TOL[dtype])
    if dtype == torch.float64:
        x = leaf(x)
        assert gradcheck(squared_norm, (x,), check_forward_ad=True)
        assert gradgradcheck(squared_norm, (x,))


# ---- the norm modules, no ties ---------------------------------------------------------------


def module_inputs(norm, edge_index, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    score = torch.randn(edge_index.size(1), H, generator=gen, dtype=dtype)
    if isinstance(norm, GATLipschitzNorm):
        att = torch.randn(H, 2 * C, generator=gen, dtype=dtype)
        return [score, node_features((N, H, C), dtype, seed), att]
    if isinstance(norm, GTLipschitzNorm):
        return [score, *(node_features((N, H, C), dtype, seed + k) for k in range(3))]
    lipschitz = torch.tensor([0.05, 1.0, 4.0], dtype=dtype)  # both terms of Eq. (15) win
    return [score, node_features((N, F_IN), dtype, seed), lipschitz]


MODULES = [
    (GATLipschitzNorm(), RefGATNorm()),
    (GATLipschitzNorm(alpha=2.0, variant="published"), RefGATNorm(alpha=2.0, variant="published")),
    (GTLipschitzNorm(alpha=1.5), RefGTNorm(alpha=1.5)),
    (GTLipschitzNorm(variant="published"), RefGTNorm(variant="published")),
    (ScoreLipschitzNorm(alpha=0.7), RefScoreNorm(alpha=0.7)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loops", [False, True])
@pytest.mark.parametrize(("norm", "ref"), MODULES, ids=lambda m: repr(m))
def test_norm_module_matches_reference(norm, ref, loops, dtype):
    """Isolated nodes (without loops), zero rows and duplicate edges, three heads."""
    edge_index = random_graph(4, loops)
    inputs = module_inputs(norm, edge_index, dtype, 5)
    got_in, ref_in = [leaf(t) for t in inputs], [leaf(t) for t in inputs]
    got, want = norm(*got_in, edge_index), ref(*ref_in, edge_index)
    torch.testing.assert_close(got, want, **TOL[dtype])
    weight = torch.randn_like(got)
    assert_same(gradients(got, got_in, weight), gradients(want, ref_in, weight), dtype)


# ---- whole layers, with ties -----------------------------------------------------------------


LAYERS = [
    (GATLayer, {}, GATLipschitzNorm()),
    (GATLayer, {}, GATLipschitzNorm(variant="published")),
    (GATLayer, {"add_self_loops": False}, GATLipschitzNorm()),
    (GTLayer, {"bias": False, "add_self_loops": True}, GTLipschitzNorm()),
    (GTLayer, {"bias": False, "add_self_loops": True}, GTLipschitzNorm(variant="published")),
    (GTLayer, {"add_self_loops": False}, GTLipschitzNorm(alpha=2.0)),
    (GATv2Layer, {}, ScoreLipschitzNorm()),
    (GATv2Layer, {"add_self_loops": False}, ScoreLipschitzNorm(alpha=0.5)),
]


def reference_twin(cls, kwargs, layer):
    """A copy of ``layer`` whose norm computes the straightforward formula."""
    twin = cls(**kwargs, norm=ref_norm(layer.norm)).to(next(layer.parameters()).dtype)
    twin.load_state_dict(layer.state_dict())
    return twin


def ref_norm(norm):
    if isinstance(norm, ScoreLipschitzNorm):
        return RefScoreNorm(alpha=norm.alpha, eps=norm.eps)
    return REFERENCE[type(norm)](alpha=norm.alpha, eps=norm.eps, variant=norm.variant)


def merge_twins(grad):
    """Input gradient with each twin row added onto the row it copies (ties may route the
    maximum's gradient to either), twin rows zeroed."""
    grad = grad.clone()
    for row, twin in TWINS.items():
        grad[twin] += grad[row]
        grad[row] = 0.0
    return grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("cls", "options", "norm"), LAYERS)
def test_layer_matches_reference_with_ties(cls, options, norm, dtype):
    """Twin rows tie in every neighbourhood maximum they enter: the outputs, attention
    weights and parameter gradients equal the reference's; the input gradient does after
    adding each twin's row onto its original."""
    torch.manual_seed(6)
    kwargs = {"in_channels": F_IN, "out_channels": C, "heads": H, **options}
    layer = cls(**kwargs, norm=norm).to(dtype)
    twin = reference_twin(cls, kwargs, layer)
    x = node_features((N, F_IN), dtype, 7, twins=True)
    edge_index = random_graph(8, loops=False)
    x_got, x_ref = leaf(x), leaf(x)
    got, (_, alpha) = layer(x_got, edge_index, return_attention_weights=True)
    want, (_, want_alpha) = twin(x_ref, edge_index, return_attention_weights=True)
    torch.testing.assert_close(got, want, **TOL[dtype])
    torch.testing.assert_close(alpha, want_alpha, **TOL[dtype])
    weight = torch.randn_like(got)
    got_g = gradients(got, [x_got, *layer.parameters()], weight)
    want_g = gradients(want, [x_ref, *twin.parameters()], weight)
    assert_same(got_g[1:], want_g[1:], dtype)
    assert_same([merge_twins(got_g[0])], [merge_twins(want_g[0])], dtype)


def test_fused_squared_norms_holds_in_its_block_and_thread_only():
    """The fused norm is on inside the block, off after it, and off in a thread started in it."""
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)

    def fused() -> bool:
        return type(squared_norm(x).grad_fn).__name__ == "SquaredNormBackward"

    other_thread: list[bool] = []
    with fused_squared_norms():
        inside = fused()
        worker = threading.Thread(target=lambda: other_thread.append(fused()))
        worker.start()
        worker.join()
        with fused_squared_norms():
            nested = fused()
        after_nested = fused()
    assert (inside, nested, after_nested, other_thread, fused()) == (
        True,
        True,
        True,
        [False],
        False,
    )
