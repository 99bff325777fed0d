"""LipschitzNorm modules and layers against dense computations written with explicit loops.

The graph has 6 nodes: node 0 has three in-neighbours and an input self-loop (which must count
once), node 1 one in-neighbour, node 4 none (only itself once self-loops are added), and
node 5 all-zero features.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from lipnorm_exp.nn import (
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    GTLipschitzNorm,
    ScoreLipschitzNorm,
)

N, F_IN, H, C = 6, 5, 3, 4
EDGES = [(1, 0), (2, 0), (3, 0), (0, 0), (0, 1), (1, 2), (4, 2), (0, 3), (5, 3), (2, 5)]
EPS = 1e-12


def edge_index(edges=EDGES):
    return torch.tensor(edges).t()


def neighbourhoods(edges=EDGES):
    """N(i) by hand: the in-neighbours of i and i itself, each once."""
    nb = {i: {i} for i in range(N)}
    for j, i in edges:
        nb[i].add(j)
    return {i: sorted(s) for i, s in nb.items()}


def with_loops():
    """Every edge (j, i), j in N(i), in a fixed order (for the norm modules)."""
    return torch.tensor([(j, i) for i, nbrs in neighbourhoods().items() for j in nbrs]).t()


def features(dtype=torch.float64):
    x = torch.randn(N, F_IN, dtype=dtype)
    x[5] = 0.0
    return x


def sq(v):
    return v.dot(v)


# ---- dense denominators, one edge (j, i) and one head h at a time --------------------------


def gat_scale(z, att, i, j, h, variant):
    nbrs = neighbourhoods()[i]
    if variant == "paper":
        rows = [torch.cat([z[i, h], z[k, h]]) for k in nbrs]
        return att[h].norm() * max(row.norm() for row in rows)
    return 4 * att[h].norm() * torch.sqrt(max(sq(z[k, h]) for k in nbrs) + sq(z[j, h]))


def gt_scale(q, k, v, i, h, variant, all_edges):
    nbrs = neighbourhoods()[i]
    if variant == "paper":
        u = q[i, h].norm()
    else:
        u = torch.sqrt(sum(sq(q[t, h]) for _, t in all_edges))
    kn = max(k[s, h].norm() for s in nbrs)
    vn = max(v[s, h].norm() for s in nbrs)
    return max(u * kn, u * vn, kn * vn)


def score_scale(raw, x, lip, i, h):
    """raw: {j: raw score of edge (j, i) for head h}; the rows are [x_i || x_j]."""
    nbrs = neighbourhoods()[i]
    row = max(torch.cat([x[i], x[s]]).norm() for s in nbrs)
    return max(max(abs(raw[s]) for s in nbrs), row * lip[h])


# ---- the norm modules alone ----------------------------------------------------------------


@pytest.mark.parametrize("variant", ["paper", "published"])
@pytest.mark.parametrize("alpha", [1.0, 2.5])
def test_gat_norm_matches_dense(variant, alpha):
    torch.manual_seed(0)
    ei = with_loops()
    z, att = torch.randn(N, H, C, dtype=torch.float64), torch.randn(H, 2 * C, dtype=torch.float64)
    z[5] = 0.0
    score = torch.randn(ei.size(1), H, dtype=torch.float64)
    got = GATLipschitzNorm(alpha=alpha, variant=variant)(score, z, att, ei)
    for e, (j, i) in enumerate(ei.t().tolist()):
        for h in range(H):
            want = alpha * score[e, h] / (gat_scale(z, att, i, j, h, variant) + EPS)
            assert torch.allclose(got[e, h], want, rtol=1e-10)


@pytest.mark.parametrize("variant", ["paper", "published"])
def test_gt_norm_matches_dense(variant):
    torch.manual_seed(1)
    ei = with_loops()
    q, k, v = (torch.randn(N, H, C, dtype=torch.float64) for _ in range(3))
    k[5] = 0.0
    v[5] = 0.0
    score = torch.stack([(q[i] * k[j]).sum(-1) for j, i in ei.t().tolist()])
    got = GTLipschitzNorm(alpha=1.5, variant=variant)(score, q, k, v, ei)
    edges = ei.t().tolist()
    scaling = 1.0 if variant == "paper" else math.sqrt(C)
    for e, (j, i) in enumerate(edges):
        for h in range(H):
            raw = float(q[i, h].dot(k[j, h])) / scaling
            want = 1.5 * raw / (gt_scale(q, k, v, i, h, variant, edges) + EPS)
            assert got[e, h].item() == pytest.approx(float(want), rel=1e-10, abs=1e-14)


def test_score_norm_matches_dense():
    torch.manual_seed(2)
    ei = with_loops()
    x = features()
    score = 3 * torch.randn(ei.size(1), H, dtype=torch.float64)
    lip = torch.tensor([0.01, 1.0, 5.0], dtype=torch.float64)  # small L: |g~| term wins
    got = ScoreLipschitzNorm(alpha=0.7)(score, x, lip, ei)
    edges = ei.t().tolist()
    for e, (j, i) in enumerate(edges):
        for h in range(H):
            raw = {s: score[f, h] for f, (s, t) in enumerate(edges) if t == i}
            want = 0.7 * raw[j] / (score_scale(raw, x, lip, i, h) + EPS)
            assert got[e, h].item() == pytest.approx(want.item(), rel=1e-10)
    # the first term is active for some head, the second for another
    assert got[:, 0].abs().max().item() == pytest.approx(0.7)
    assert got[:, 2].abs().max().item() < 0.7


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_normalised_scores_are_bounded_by_alpha(scale):
    """|e_ij| <= ||a|| ||[z_i || z_j]|| <= c_i and |q_i . k_j| <= uv: scores within alpha,
    within alpha / 4 for the published GAT denominator, at any input scale."""
    torch.manual_seed(5)
    ei = with_loops()
    z, q, k, v = (scale * torch.randn(N, H, C) for _ in range(4))
    att = torch.randn(H, 2 * C)
    e = (z[ei[1]] * att[:, :C]).sum(-1) + (z[ei[0]] * att[:, C:]).sum(-1)
    assert GATLipschitzNorm(alpha=2.0)(e, z, att, ei).abs().max() <= 2.0 + 1e-5
    assert GATLipschitzNorm(variant="published")(e, z, att, ei).abs().max() <= 0.25 + 1e-6
    s = (q[ei[1]] * k[ei[0]]).sum(-1)
    assert GTLipschitzNorm(alpha=2.0)(s, q, k, v, ei).abs().max() <= 2.0 + 1e-5
    assert e.abs().max() > 0.1 * scale  # the raw scores do follow the input scale


@pytest.mark.parametrize("alpha", [1.0, 4.0])
def test_gat_lip_attention_weights_differ_by_at_most_exp_of_the_score_range(alpha):
    """Scores in [-alpha, alpha], then LeakyReLU(0.2): within a neighbourhood the largest weight
    is at most e^{1.2 alpha} times the smallest (and a larger alpha allows a sharper choice);
    plain GAT on the same inputs is not bounded."""
    torch.manual_seed(2)
    ei = edge_index()
    x = 30.0 * features(torch.float32)
    ratios = {}
    for name, norm in (("gat", None), ("gat_lip", GATLipschitzNorm(alpha=alpha))):
        layer = GATLayer(F_IN, C, heads=H, negative_slope=0.2, norm=norm)
        with torch.no_grad():
            layer.att_src.mul_(20.0)
        _, (used, weight) = layer(x, ei, return_attention_weights=True)
        log_weight, target = weight.log(), used[1].unsqueeze(-1).expand_as(weight)
        largest = torch.full((N, H), -math.inf).scatter_reduce(0, target, log_weight, "amax")
        smallest = torch.full((N, H), math.inf).scatter_reduce(0, target, log_weight, "amin")
        ratios[name] = (largest - smallest).max().item()
    assert 0.5 * 1.2 * alpha < ratios["gat_lip"] <= 1.2 * alpha + 1e-4  # alpha sets the range
    assert ratios["gat"] > 1.2 * 4.0  # without the norm, far sharper than either bound


# ---- whole layers: outputs, attention weights and gradients --------------------------------


def dense_gat(layer, x):
    H_, C_ = layer.heads, layer.out_channels
    z = (x @ layer.lin.weight.T).view(-1, H_, C_)
    a_src, a_dst = layer.att_src[0], layer.att_dst[0]
    att = torch.cat([a_dst, a_src], dim=-1)
    out, weights = [], {}
    for i, nbrs in neighbourhoods().items():
        heads = []
        for h in range(H_):
            e = torch.stack([a_dst[h] @ z[i, h] + a_src[h] @ z[j, h] for j in nbrs])
            if layer.norm is not None:
                c = torch.stack([gat_scale(z, att, i, j, h, layer.norm.variant) for j in nbrs])
                e = layer.norm.alpha * e / (c + EPS)
            w = torch.softmax(F.leaky_relu(e, layer.negative_slope), dim=0)
            weights.update({(j, i, h): w[n] for n, j in enumerate(nbrs)})
            heads.append(sum(w[n] * z[j, h] for n, j in enumerate(nbrs)))
        out.append(torch.stack(heads))
    return torch.stack(out), weights


def dense_gt(layer, x):
    H_, C_ = layer.heads, layer.out_channels
    q, k, v = (lin(x).view(-1, H_, C_) for lin in (layer.lin_query, layer.lin_key, layer.lin_value))
    all_edges = [(j, i) for i, nbrs in neighbourhoods().items() for j in nbrs]
    out, weights = [], {}
    for i, nbrs in neighbourhoods().items():
        heads = []
        for h in range(H_):
            s = torch.stack([q[i, h] @ k[j, h] for j in nbrs])
            variant = None if layer.norm is None else layer.norm.variant
            if variant in (None, "published"):
                s = s / math.sqrt(C_)
            if variant is not None:
                c = gt_scale(q, k, v, i, h, variant, all_edges)
                s = layer.norm.alpha * s / (c + EPS)
            w = torch.softmax(s, dim=0)
            weights.update({(j, i, h): w[n] for n, j in enumerate(nbrs)})
            heads.append(sum(w[n] * v[j, h] for n, j in enumerate(nbrs)))
        out.append(torch.stack(heads))
    return torch.stack(out), weights


def dense_gatv2(layer, x):
    H_, C_ = layer.heads, layer.out_channels
    xl, xr = (lin(x).view(-1, H_, C_) for lin in (layer.lin_l, layer.lin_r))
    a = layer.att[0]
    w_sq = [
        layer.lin_l.weight[h * C_ : (h + 1) * C_].norm() ** 2
        + layer.lin_r.weight[h * C_ : (h + 1) * C_].norm() ** 2
        for h in range(H_)
    ]
    lip = [a[h].norm() * torch.sqrt(w_sq[h]) for h in range(H_)]
    out, weights = [], {}
    for i, nbrs in neighbourhoods().items():
        heads = []
        for h in range(H_):
            pre = [xr[i, h] + xl[j, h] for j in nbrs]
            g = torch.stack([a[h] @ F.leaky_relu(p, layer.negative_slope) for p in pre])
            if layer.norm is not None:
                raw = dict(zip(nbrs, g, strict=True))
                g = layer.norm.alpha * g / (score_scale(raw, x, lip, i, h) + EPS)
            w = torch.softmax(g, dim=0)
            weights.update({(j, i, h): w[n] for n, j in enumerate(nbrs)})
            heads.append(sum(w[n] * xl[j, h] for n, j in enumerate(nbrs)))
        out.append(torch.stack(heads))
    return torch.stack(out), weights


def finish(layer, out, x):
    out = out.reshape(N, -1) if layer.concat else out.mean(dim=1)
    if isinstance(layer, GTLayer):
        return out + layer.lin_skip(x)
    return out + layer.bias


LOOPS = {GATLayer: {}, GATv2Layer: {}, GTLayer: {"add_self_loops": True}}  # i in N(i) for all
CASES = [
    (GATLayer, dense_gat, None),
    (GATLayer, dense_gat, GATLipschitzNorm()),
    (GATLayer, dense_gat, GATLipschitzNorm(alpha=2.0, variant="published")),
    (GTLayer, dense_gt, None),
    (GTLayer, dense_gt, GTLipschitzNorm()),
    (GTLayer, dense_gt, GTLipschitzNorm(variant="published")),
    (GATv2Layer, dense_gatv2, None),
    (GATv2Layer, dense_gatv2, ScoreLipschitzNorm()),
]


@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize(("cls", "dense", "norm"), CASES)
def test_layer_matches_dense(cls, dense, norm, concat):
    """Outputs, attention weights and gradients (input and parameters) of the scatter path
    equal the straightforward per-node, per-head computation."""
    torch.manual_seed(3)
    layer = cls(F_IN, C, heads=H, concat=concat, norm=norm, **LOOPS[cls]).double()
    with torch.no_grad():  # non-zero biases, so that they are checked too
        for name, p in layer.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    x = features().requires_grad_()
    out, (ei, alpha) = layer(x, edge_index(), return_attention_weights=True)
    want_core, want_w = dense(layer, x)
    want = finish(layer, want_core, x)
    torch.testing.assert_close(out, want, rtol=1e-9, atol=1e-12)

    assert ei.size(1) == len(want_w) // H  # one self-loop per node, none twice
    for e, (j, i) in enumerate(ei.t().tolist()):
        for h in range(H):
            torch.testing.assert_close(alpha[e, h], want_w[(j, i, h)], rtol=1e-9, atol=1e-12)

    weight = torch.randn_like(out)
    params = [x, *layer.parameters()]
    got_g = torch.autograd.grad((out * weight).sum(), params, allow_unused=True)
    want_g = torch.autograd.grad((want * weight).sum(), params, allow_unused=True)
    for g, w in zip(got_g, want_g, strict=True):
        if w is None:
            assert g is None or not g.abs().any()
        else:
            torch.testing.assert_close(g, w, rtol=1e-8, atol=1e-10)


# ---- edge features on a bipartite graph, by hand -----------------------------------------
#
# Sources and targets differ (features of 5 and 3 channels), edges carry 2 features, and a
# target's rows are [x_i || x_j || e_ij]: Eq. (17), (19) and (15) with the edge term inside.

N_SRC, N_DST, F_SRC, F_DST, D = 5, 3, 5, 3, 2
BI_EDGES = [(0, 0), (1, 0), (2, 0), (3, 1), (0, 1), (4, 2), (1, 2), (1, 1)]


def bipartite_inputs():
    gen = torch.Generator().manual_seed(8)
    x = (torch.randn(N_SRC, F_SRC, generator=gen, dtype=torch.float64),
         torch.randn(N_DST, F_DST, generator=gen, dtype=torch.float64))  # fmt: skip
    edge_attr = torch.randn(len(BI_EDGES), D, generator=gen, dtype=torch.float64)
    return x, edge_attr


def in_edges(i):
    """(edge number, source) of every edge into target i."""
    return [(e, j) for e, (j, t) in enumerate(BI_EDGES) if t == i]


def heads_of(t, layer):
    return t.view(t.size(0), layer.heads, layer.out_channels)


def bipartite_gat(layer, x, edge_attr):
    zs, zd = heads_of(layer.lin_src(x[0]), layer), heads_of(layer.lin_dst(x[1]), layer)
    eps_ = heads_of(layer.lin_edge(edge_attr), layer)
    a_src, a_dst, a_edge = layer.att_src[0], layer.att_dst[0], layer.att_edge[0]
    out, weights = [], {}
    for i in range(N_DST):
        heads = []
        for h in range(layer.heads):
            e = torch.stack(
                [a_dst[h] @ zd[i, h] + a_src[h] @ zs[j, h] + a_edge[h] @ eps_[k, h]
                 for k, j in in_edges(i)]
            )  # fmt: skip
            att = torch.cat([a_dst[h], a_src[h], a_edge[h]])
            rows = [torch.cat([zd[i, h], zs[j, h], eps_[k, h]]) for k, j in in_edges(i)]
            c = att.norm() * max(row.norm() for row in rows)
            w = torch.softmax(F.leaky_relu(e / (c + EPS), layer.negative_slope), dim=0)
            weights.update({(k, h): w[n] for n, (k, _) in enumerate(in_edges(i))})
            heads.append(sum(w[n] * zs[j, h] for n, (_, j) in enumerate(in_edges(i))))
        out.append(torch.stack(heads))
    return torch.stack(out).reshape(N_DST, -1) + layer.bias, weights


def bipartite_gt(layer, x, edge_attr):
    q = heads_of(layer.lin_query(x[1]), layer)
    k, v = heads_of(layer.lin_key(x[0]), layer), heads_of(layer.lin_value(x[0]), layer)
    eps_ = heads_of(layer.lin_edge(edge_attr), layer)
    out, weights = [], {}
    for i in range(N_DST):
        heads = []
        for h in range(layer.heads):
            keys = [k[j, h] + eps_[e, h] for e, j in in_edges(i)]
            values = [v[j, h] + eps_[e, h] for e, j in in_edges(i)]
            u, vn, wn = q[i, h].norm(), max(t.norm() for t in keys), max(t.norm() for t in values)
            s = torch.stack([q[i, h] @ key for key in keys]) / (max(u * vn, u * wn, vn * wn) + EPS)
            w = torch.softmax(s, dim=0)
            weights.update({(e, h): w[n] for n, (e, _) in enumerate(in_edges(i))})
            heads.append(sum(w[n] * values[n] for n in range(len(values))))
        out.append(torch.stack(heads))
    return torch.stack(out).reshape(N_DST, -1) + layer.lin_skip(x[1]), weights


def bipartite_gatv2(layer, x, edge_attr):
    xl, xr = heads_of(layer.lin_l(x[0]), layer), heads_of(layer.lin_r(x[1]), layer)
    eps_, a = heads_of(layer.lin_edge(edge_attr), layer), layer.att[0]
    C_ = layer.out_channels
    lip = [
        a[h].norm()
        * torch.cat([lin.weight[h * C_ : (h + 1) * C_].flatten()
                     for lin in (layer.lin_l, layer.lin_r, layer.lin_edge)]).norm()
        for h in range(layer.heads)
    ]  # fmt: skip
    out, weights = [], {}
    for i in range(N_DST):
        heads = []
        for h in range(layer.heads):
            g = torch.stack(
                [a[h] @ F.leaky_relu(xr[i, h] + xl[j, h] + eps_[e, h], layer.negative_slope)
                 for e, j in in_edges(i)]
            )  # fmt: skip
            row = max(torch.cat([x[1][i], x[0][j], edge_attr[e]]).norm() for e, j in in_edges(i))
            w = torch.softmax(g / (max(g.abs().max(), row * lip[h]) + EPS), dim=0)
            weights.update({(e, h): w[n] for n, (e, _) in enumerate(in_edges(i))})
            heads.append(sum(w[n] * xl[j, h] for n, (_, j) in enumerate(in_edges(i))))
        out.append(torch.stack(heads))
    return torch.stack(out).reshape(N_DST, -1) + layer.bias, weights


@pytest.mark.parametrize(
    ("cls", "dense"),
    [(GATLayer, bipartite_gat), (GTLayer, bipartite_gt), (GATv2Layer, bipartite_gatv2)],
)
def test_edge_features_on_a_bipartite_graph_match_dense(cls, dense):
    """Outputs, weights and gradients (features, edge features, parameters) of ``norm="lip"``
    with edge features on a bipartite graph equal the per-target, per-head formula."""
    torch.manual_seed(9)
    layer = cls((F_SRC, F_DST), C, heads=H, edge_dim=D, add_self_loops=False, norm="lip")
    layer = layer.double()
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    (x_src, x_dst), edge_attr = bipartite_inputs()
    inputs = [t.requires_grad_() for t in (x_src, x_dst, edge_attr)]
    ei = edge_index(BI_EDGES)
    out, (_, alpha) = layer((x_src, x_dst), ei, edge_attr, return_attention_weights=True)
    want, want_w = dense(layer, (x_src, x_dst), edge_attr)
    torch.testing.assert_close(out, want, rtol=1e-9, atol=1e-12)
    for (e, h), w in want_w.items():
        torch.testing.assert_close(alpha[e, h], w, rtol=1e-9, atol=1e-12)
    weight = torch.randn_like(out)
    params = [*inputs, *layer.parameters()]
    got_g = torch.autograd.grad((out * weight).sum(), params)
    want_g = torch.autograd.grad((want * weight).sum(), params)
    for g, w in zip(got_g, want_g, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("targets", [True, False])
def test_published_gat_norm_and_missing_targets_match_dense(targets):
    """The published denominator with the edge term in its row; without target features
    (PyG's ``(x_src, None)``) the paper's rows are [z_j || e_ij] only."""
    gen = torch.Generator().manual_seed(10)
    zs = torch.randn(N_SRC, H, C, generator=gen, dtype=torch.float64)
    zd = torch.randn(N_DST, H, C, generator=gen, dtype=torch.float64)
    eps_ = torch.randn(len(BI_EDGES), H, C, generator=gen, dtype=torch.float64)
    att = torch.randn(H, 3 * C if targets else 2 * C, generator=gen, dtype=torch.float64)
    score = torch.randn(len(BI_EDGES), H, generator=gen, dtype=torch.float64)
    x, ei = (zs, zd if targets else None), edge_index(BI_EDGES)
    paper = GATLipschitzNorm(alpha=2.0)(score, x, att, ei, eps_, N_DST)
    published = GATLipschitzNorm(variant="published")(score, x, att, ei, eps_, N_DST)
    for e, (j, i) in enumerate(BI_EDGES):
        for h in range(H):
            dst = [zd[i, h]] if targets else []
            rows = [torch.cat([*dst, zs[k, h], eps_[f, h]]) for f, k in in_edges(i)]
            c = att[h].norm() * max(row.norm() for row in rows)
            torch.testing.assert_close(paper[e, h], 2.0 * score[e, h] / (c + EPS))
            node_max = max(sq(zs[k, h]) for _, k in in_edges(i))
            c = 4 * att[h].norm() * torch.sqrt(node_max + sq(zs[j, h]) + sq(eps_[e, h]))
            torch.testing.assert_close(published[e, h], score[e, h] / (c + EPS))


# ---- zero features: no NaN, finite gradients -----------------------------------------------

ZERO_CASES = [
    (GATLayer, "lip"),
    (GATLayer, GATLipschitzNorm(variant="published")),
    (GTLayer, "lip"),
    (GTLayer, GTLipschitzNorm(variant="published")),
    (GATv2Layer, "lip"),
]


@pytest.mark.parametrize("scale", [0.0, 1e-30, 1e-20])
@pytest.mark.parametrize(("cls", "norm"), ZERO_CASES)
def test_all_zero_features_stay_finite(cls, norm, scale):
    torch.manual_seed(4)
    layer = cls(F_IN, C, heads=H, bias=False, norm=norm, **LOOPS[cls])
    x = (scale * torch.randn(N, F_IN)).requires_grad_()
    out, (_, alpha) = layer(x, edge_index(), return_attention_weights=True)
    assert torch.isfinite(out).all() and torch.isfinite(alpha).all()
    grads = torch.autograd.grad((out.sum() + out.pow(2).sum()), [x, *layer.parameters()])
    assert all(torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize(
    "norm", [GATLipschitzNorm(), GATLipschitzNorm(variant="published"), GTLipschitzNorm()]
)
def test_norm_at_zero_gives_zero_scores_and_finite_gradients(norm):
    ei = with_loops()
    z = torch.zeros(N, H, C, requires_grad=True)
    score = (z[ei[0]] * z[ei[1]]).sum(-1)
    if isinstance(norm, GATLipschitzNorm):
        out = norm(score, z, torch.ones(H, 2 * C), ei)
    else:
        out = norm(score, z, z, z, ei)
    assert not out.any()
    (grad,) = torch.autograd.grad(out.sum(), z)
    assert torch.isfinite(grad).all()


@pytest.mark.parametrize("cls", [GATLipschitzNorm, GTLipschitzNorm, ScoreLipschitzNorm])
def test_norm_options_are_validated(cls):
    for bad in (-1.0, 0.0, math.nan, math.inf, "1", True):
        with pytest.raises(ValueError, match=f"^{cls.__name__}: alpha must be a finite number > 0"):
            cls(alpha=bad)
        with pytest.raises(ValueError, match=f"^{cls.__name__}: eps must be a finite number > 0"):
            cls(eps=bad)
    if cls is not ScoreLipschitzNorm:
        with pytest.raises(ValueError, match="unknown variant 'paperr'; allowed: paper, published"):
            cls(variant="paperr")
