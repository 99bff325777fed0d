r"""The paper's Lipschitz bounds for one attention head, checked on Jacobians.

The paper measures Lipschitz constants for the Frobenius norm (the 2-norm of the flattened input
and output), so :math:`L_F(\mathrm{Att}) = \sup_X \|J_X\|_2`, the largest spectral norm of the
Jacobian of the flattened output with respect to the flattened input. Every test takes ONE head
and ONE target node (the centre 0 of a star whose leaves point to it; the layer adds the
self-loops, so :math:`N(0)` has :math:`n` members and there is :math:`m = 1` output), computes
the full Jacobian with ``torch.autograd.functional.jacobian`` in float64, and compares its
spectral norm with the bound:

- on random inputs, on the same inputs scaled by 1e3, on inputs built to make the unnormalised
  head blow up (scores that tie, so the softmax is not saturated, on large and far-apart
  vectors), and on the worst inputs found by gradient ascent on the spectral norm;
- and shows that without normalisation the same head exceeds the bound on the tie inputs, while
  random large inputs saturate the softmax and hide the blow-up.

**GAT (Corollary 1, and Theorem 3 for** :math:`\alpha \ne 1` **).** The corollary's attention
maps the matrix :math:`X` of the rows :math:`x_j = [z_0 \,\|\, z_j]`, :math:`j \in N(0)`, each a
free input, to :math:`\sum_j \mathrm{softmax}_j(g(X)) \, h(x_j)` with the query :math:`a` fixed;
the layer aggregates :math:`h(x_j) = z_j`, a projection, which the paper's remark to Theorem 2
allows. In the layer :math:`z_0` is shared by all rows, so it is not a free input of one row (the
map from :math:`z_0` to :math:`X` copies it :math:`n` times and is not contractive). The test
therefore fixes :math:`z_0` and differentiates with respect to the leaves' :math:`z_j`: this is
the corollary's function on an affine slice of its domain (first halves fixed, the self row
fixed), along which perturbations embed isometrically, so its Jacobian norm is at most
:math:`L_F(\mathrm{Att}) \le e^\alpha \sqrt{1/n} + \alpha \sqrt{8}`. ``lin`` is the identity so
that :math:`z = x`. LeakyReLU after the normalisation has slope in :math:`[0, 1]` and
:math:`|\mathrm{LeakyReLU}(s)| \le |s|`, so the proof carries over; slope 1 (the identity) is the
corollary's exact setting and is tested too.

**GT (Corollary 2).** The input is :math:`X = (Q \| K \| V)` with one query :math:`q_0` and the
keys and values of :math:`N(0)`, all free. The layer's input rows are
:math:`x_j = [q_j \,\|\, k_j \,\|\, v_j]` and its projections select the blocks, so the Jacobian
with respect to all rows equals the corollary's Jacobian plus zero columns (the leaves' unused
queries): the bound :math:`e^{\sqrt 3} \sqrt{1/n} + 2\sqrt 6` applies exactly.

**GATv2 (Theorem 3, Eq. 15).** As for GAT, the rows are :math:`[x_0 \,\|\, x_j]` with
:math:`x_0` fixed; ``lin_l`` is the identity without bias, so the aggregated values are the second
halves of the rows; the bound is :math:`e^\alpha \sqrt{1/n} + \alpha\sqrt 8` with
:math:`\alpha = 1`.

**Edge features.** With edge features the rows gain the features of their edge, which are free
inputs too (the self-loops are given with the edges, so that their features are free as well):
:math:`[z_0 \,\|\, z_j \,\|\, e_{j0}]` for GAT and GATv2, whose bounds are unchanged; for GT
the per-edge keys and values :math:`k_j + e_{j0}`, :math:`v_j + e_{j0}`, for which Corollary 2
holds with respect to the node features, and within :math:`\sqrt 3` (the norm of
:math:`(k, v, e) \mapsto (k + e, v + e)`) with the edge features free as well.

**Multi-head attention (Corollary 2).** One head with identity projections: the input is
:math:`X = (Q \| K \| V)` with :math:`m` queries and :math:`n` keys, the bound
:math:`e^{\sqrt 3} \sqrt{m/n} + 2\sqrt 6`.
"""

import math

import pytest
import torch
from torch.autograd.functional import jacobian

from lipnorm_exp.nn import (
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    LipschitzMultiheadAttention,
)

C = 3
SIZES = [2, 5]  # n = |N(0)|: the centre and one leaf, the centre and four leaves
f64 = torch.float64


def star(n):
    return torch.tensor([list(range(1, n)), [0] * (n - 1)])


def spectral(f, inputs):
    jac = jacobian(f, inputs).reshape(-1, inputs.numel())
    return torch.linalg.matrix_norm(jac, ord=2).item()


def worst_found(f, shape, seeds=2, steps=30):
    """Largest Jacobian spectral norm met by gradient ascent from a few random starts."""
    best = 0.0
    for seed in range(seeds):
        torch.manual_seed(seed)
        x = torch.randn(shape, dtype=f64, requires_grad=True)
        opt = torch.optim.Adam([x], lr=0.1)
        for _ in range(steps):
            jac = jacobian(f, x, create_graph=True).reshape(-1, x.numel())
            norm = torch.linalg.matrix_norm(jac, ord=2)
            best = max(best, norm.item())
            opt.zero_grad()
            (-norm).backward()
            opt.step()
    return best


def linear_bound(n, alpha=1.0):
    """Corollary 1 / Theorem 3 with m = 1."""
    return math.exp(alpha) * math.sqrt(1 / n) + alpha * math.sqrt(8)


def quadratic_bound(n, m=1):
    """Corollary 2: m queries, n keys."""
    return math.exp(math.sqrt(3)) * math.sqrt(m / n) + 2 * math.sqrt(6)


def check_head(f, shape, tie_inputs, bound):
    """Random, random x 1e3, tie inputs (up to 1e3) and gradient ascent all stay <= bound."""
    torch.manual_seed(10)
    x = torch.randn(shape, dtype=f64)
    norms = [spectral(f, x), spectral(f, 1e3 * x)]
    norms += [spectral(f, tie_inputs(t)) for t in (1.0, 1e3)]
    norms.append(worst_found(f, shape))
    assert max(norms) <= bound, (norms, bound)


def check_blow_up(f, shape, tie_inputs, bound):
    """Unnormalised: the tie inputs exceed the bound; random large inputs do not show it."""
    torch.manual_seed(10)
    assert spectral(f, 1e3 * torch.randn(shape, dtype=f64)) < bound  # saturated softmax
    assert spectral(f, tie_inputs(1e3)) > 5 * bound


# ---- GAT ---------------------------------------------------------------------------------


def orthogonal(a):
    """Projection onto the complement of vector ``a``."""
    a = a.detach()
    return torch.eye(C, dtype=f64) - torch.outer(a, a) / a.dot(a)


def edge_options(edges):
    """Edge features of C channels, read through an identity ``lin_edge``; the self-loops are
    given (``star_head``), so that each row's features are a free input."""
    return {"edge_dim": C, "add_self_loops": False} if edges else {}


def star_head(layer, centre, n, edges):
    """The centre's output as a function of the leaves' features followed, with ``edges``, by
    the features of every edge into the centre (the centre's self-loop last)."""
    if edges:
        with torch.no_grad():
            layer.lin_edge.weight.copy_(torch.eye(C))
        loop = torch.cat([star(n), torch.zeros(2, 1, dtype=torch.long)], dim=1)
        return lambda x: layer(torch.cat([centre[None], x[: n - 1]]), loop, x[n - 1 :])[0]
    return lambda x: layer(torch.cat([centre[None], x]), star(n))[0]


def gat_setting(norm, n, slope=0.2, edges=False):
    """Rows [z_0 || z_j (|| e_j0)], z_0 fixed; ties: the free parts orthogonal to a_src (a_edge)."""
    torch.manual_seed(n)
    layer = GATLayer(C, C, negative_slope=slope, bias=False, norm=norm, **edge_options(edges))
    layer = layer.double()
    with torch.no_grad():
        layer.lin.weight.copy_(torch.eye(C))
    a_dst, across = layer.att_dst[0, 0].detach(), orthogonal(layer.att_src[0, 0])
    centre = torch.randn(C, dtype=f64) @ across  # all scores equal a_dst . z_0 ...
    centre = centre if a_dst.dot(centre) > 0 else -centre  # ... > 0: LeakyReLU is linear there
    free = torch.randn(n - 1, C, dtype=f64) @ across
    if edges:
        free = torch.cat([free, torch.randn(n, C, dtype=f64) @ orthogonal(layer.att_edge[0, 0])])
    return star_head(layer, centre, n, edges), free.shape, lambda t: t * free


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("alpha", "slope"), [(1.0, 0.2), (1.0, 1.0), (3.0, 0.2)])
def test_gat_lip_head_within_corollary_1(n, alpha, slope):
    head, shape, ties = gat_setting(GATLipschitzNorm(alpha=alpha), n, slope)
    check_head(head, shape, ties, linear_bound(n, alpha))


@pytest.mark.parametrize("n", SIZES)
def test_gat_lip_head_with_edge_features_within_corollary_1(n):
    """Edge features share the rows' denominator (Eq. 17): the bound holds for the rows
    [z_0 || z_j || e_j0], leaves' features and every edge's features free."""
    check_head(*gat_setting("lip", n, edges=True), linear_bound(n))


@pytest.mark.parametrize("edges", [False, True])
@pytest.mark.parametrize("n", SIZES)
def test_gat_head_without_norm_exceeds_the_bound(n, edges):
    head, shape, ties = gat_setting(None, n, edges=edges)
    check_blow_up(head, shape, ties, linear_bound(n))


# ---- GT ----------------------------------------------------------------------------------


def gt_setting(norm, n):
    torch.manual_seed(n)
    layer = GTLayer(3 * C, C, root_weight=False, bias=False, norm=norm, add_self_loops=True)
    layer = layer.double()
    eye, zero = torch.eye(C, dtype=f64), torch.zeros(C, C, dtype=f64)
    with torch.no_grad():
        layer.lin_query.weight.copy_(torch.cat([eye, zero, zero], dim=1))
        layer.lin_key.weight.copy_(torch.cat([zero, eye, zero], dim=1))
        layer.lin_value.weight.copy_(torch.cat([zero, zero, eye], dim=1))
    q = torch.randn(n, C, dtype=f64)
    keys = torch.randn(n, C, dtype=f64) @ orthogonal(q[0])  # all scores 0
    values = torch.randn(n, C, dtype=f64)

    def head(x):
        return layer(x, star(n))[0]

    return head, (n, 3 * C), lambda t: torch.cat([q, keys, t * values], dim=1)


@pytest.mark.parametrize("n", SIZES)
def test_gt_lip_head_within_corollary_2(n):
    head, shape, ties = gt_setting("lip", n)
    check_head(head, shape, ties, quadratic_bound(n))


@pytest.mark.parametrize("n", SIZES)
def test_gt_head_without_norm_exceeds_the_bound(n):
    head, shape, ties = gt_setting(None, n)
    check_blow_up(head, shape, ties, quadratic_bound(n))


def gt_edge_setting(n, joint):
    """Per-edge keys and values k_j + e_j0, v_j + e_j0 (TransformerConv's edge features).

    The edge features are large (1e3) and orthogonal to q_0, the keys small: a normalisation
    that took ||k_j|| instead of ||k_j + e_j0|| would divide the tie scores' derivatives by far
    too little. ``joint``: the edge features are inputs too, else fixed.
    """
    torch.manual_seed(n)
    layer = GTLayer(3 * C, C, edge_dim=C, root_weight=False, bias=False, norm="lip").double()
    eye, zero = torch.eye(C, dtype=f64), torch.zeros(C, C, dtype=f64)
    with torch.no_grad():
        layer.lin_query.weight.copy_(torch.cat([eye, zero, zero], dim=1))
        layer.lin_key.weight.copy_(torch.cat([zero, eye, zero], dim=1))
        layer.lin_value.weight.copy_(torch.cat([zero, zero, eye], dim=1))
        layer.lin_edge.weight.copy_(eye)
    q = torch.randn(n, C, dtype=f64)
    across = orthogonal(q[0])
    keys = 1e-2 * torch.randn(n, C, dtype=f64) @ across
    edge_attr = 1e3 * torch.randn(n, C, dtype=f64) @ across  # all scores 0
    values = torch.randn(n, C, dtype=f64)
    loop = torch.cat([star(n), torch.zeros(2, 1, dtype=torch.long)], dim=1)
    if joint:
        return (
            lambda x: layer(x[:, : 3 * C], loop, x[:, 3 * C :])[0],
            (n, 4 * C),
            lambda t: torch.cat([q, keys, t * values, edge_attr], dim=1),
        )
    return (
        lambda x: layer(x, loop, edge_attr)[0],
        (n, 3 * C),
        lambda t: torch.cat([q, keys, t * values], dim=1),
    )


@pytest.mark.parametrize("n", SIZES)
def test_gt_lip_head_with_edge_features_within_corollary_2(n):
    """Corollary 2 holds for the per-edge rows (q_0, k_j + e_j0, v_j + e_j0): with respect to
    the node features at any edge features, and within sqrt(3) of it (the norm of the map from
    (k, v, e) to the rows) with the edge features free as well."""
    check_head(*gt_edge_setting(n, joint=False), quadratic_bound(n))
    check_head(*gt_edge_setting(n, joint=True), math.sqrt(3) * quadratic_bound(n))


# ---- GATv2 -------------------------------------------------------------------------------


def gatv2_setting(norm, n, edges=False):
    """Ties: the score reads coordinate 0 only (a = e_0), where every row has the same value."""
    torch.manual_seed(n)
    layer = GATv2Layer(C, C, norm=norm, **edge_options(edges)).double()
    centre = torch.randn(C, dtype=f64)
    centre[0] = 0.0
    free = torch.randn(2 * n - 1 if edges else n - 1, C, dtype=f64)  # leaves (and edges)
    free[:, 0] = 0.0
    with torch.no_grad():
        layer.lin_l.weight.copy_(torch.eye(C))
        layer.lin_l.bias.zero_()
        layer.lin_r.bias.normal_()
        layer.att.zero_()
        layer.att[0, 0, 0] = 1.0
        layer.lin_r.bias[0] += layer.lin_r(centre)[0].abs() + 1.0  # LeakyReLU linear there
    return star_head(layer, centre, n, edges), free.shape, lambda t: t * free


@pytest.mark.parametrize("edges", [False, True])
@pytest.mark.parametrize("n", SIZES)
def test_gatv2_lip_head_within_theorem_3(n, edges):
    """With edge features the rows are [x_0 || x_j || e_j0] and L covers W_e (Eq. 15)."""
    head, shape, ties = gatv2_setting("lip", n, edges)
    check_head(head, shape, ties, linear_bound(n))


@pytest.mark.parametrize("n", SIZES)
def test_gatv2_head_without_norm_exceeds_the_bound(n):
    head, shape, ties = gatv2_setting(None, n)
    check_blow_up(head, shape, ties, linear_bound(n))


# ---- dense multi-head attention ----------------------------------------------------------


def mha_setting(norm, n, m=1):
    """One head, identity projections: the input is X = (Q || K || V), m queries and n keys,
    all free, as in Corollary 2; ties: keys orthogonal to the first query."""
    torch.manual_seed(n)
    layer = LipschitzMultiheadAttention(C, 1, bias=False, norm=norm).double()
    eye = torch.eye(C, dtype=f64)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([eye, eye, eye]))
        layer.out_proj.weight.copy_(eye)
    q = torch.randn(m, C, dtype=f64)
    keys = torch.randn(n, C, dtype=f64) @ orthogonal(q[0])
    values = torch.randn(n, C, dtype=f64)

    def head(x):
        return layer(x[:m], x[m : m + n], x[m + n :], need_weights=False)[0]

    return head, (m + 2 * n, C), lambda t: torch.cat([q, keys, t * values])


@pytest.mark.parametrize(("n", "m"), [(2, 1), (5, 1), (4, 3)])
def test_multihead_attention_lip_head_within_corollary_2(n, m):
    check_head(*mha_setting("lip", n, m), quadratic_bound(n, m))


@pytest.mark.parametrize("n", SIZES)
def test_multihead_attention_without_norm_exceeds_the_bound(n):
    check_blow_up(*mha_setting(None, n), quadratic_bound(n))
