"""The project's dropout draws ``F.dropout``'s noise bit for bit (``nn.dropout_noise``).

Every run's dropout goes through :func:`lipnorm_exp.nn.copy_dropout.dropout`; its faster CPU
noise must leave outputs, gradients and the generator's state exactly as ``F.dropout`` leaves
them, or every record would change (the golden histories of ``test_numerics.py`` pin that too).
"""

import pytest
import torch
import torch.nn.functional as F
from torch.func import vmap

from lipnorm_exp.nn import dropout_noise as noise_module
from lipnorm_exp.nn.copy_dropout import dropout
from lipnorm_exp.nn.dropout_noise import applies, draws_as_torch, dropout_noise


def _both(x: torch.Tensor, p: float, seed: int = 3):
    """``(output, gradient, next draw)`` of ``F.dropout`` and of ours, from one seed."""
    results = []
    for fn in (F.dropout, dropout):
        torch.manual_seed(seed)
        out = fn(x, p, True)
        (grad,) = torch.autograd.grad(
            (out * torch.linspace(-1, 2, out.numel()).view_as(out).to(out.dtype)).sum(), x
        )
        results.append((out, grad, torch.rand(5)))
    return results


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.6, 0.999])
@pytest.mark.parametrize("shape", [(2708, 16), (1001,), (4, 33, 7)])
def test_dropout_equals_torch_bit_for_bit(dtype, p, shape):
    x = torch.randn(shape).to(dtype).requires_grad_()
    assert applies(x, p)
    (theirs, ours) = _both(x, p)
    for a, b in zip(theirs, ours, strict=True):
        assert torch.equal(a, b)


def test_the_noise_is_a_scaled_bernoulli_mask():
    torch.manual_seed(0)
    noise = dropout_noise(torch.empty(200_000), 0.6)
    values = noise.unique()
    assert torch.equal(values, torch.tensor([0.0, 1.0]) / torch.tensor(0.4))
    assert abs((noise > 0).float().mean().item() - 0.4) < 0.005


@pytest.mark.parametrize(
    "case",
    ["transposed", "p=0", "p=1", "empty", "eval"],
)
def test_where_the_shortcut_does_not_apply_it_is_torchs_dropout(case):
    x = torch.randn(40, 30, requires_grad=True)
    p, training = 0.5, True
    if case == "transposed":
        x = x.t()
    elif case == "p=0":
        p = 0.0
    elif case == "p=1":
        p = 1.0
    elif case == "empty":
        x = torch.randn(0, 30, requires_grad=True)
    else:
        training = False
    if case != "eval":
        assert not applies(x, p)
    torch.manual_seed(1)
    theirs = F.dropout(x, p, training), torch.rand(3)
    torch.manual_seed(1)
    ours = dropout(x, p, training), torch.rand(3)
    assert all(torch.equal(a, b) for a, b in zip(theirs, ours, strict=True))


def test_under_vmap_each_row_gets_its_own_mask_as_with_torch():
    x = torch.randn(4, 500)
    seen = []

    def each(row):
        seen.append(applies(row, 0.5))
        return dropout(row, 0.5, True)

    out = vmap(each, randomness="different")(x)
    assert seen == [False]  # inside a transform the shortcut steps aside
    masks = out != 0
    assert not all(torch.equal(masks[0], row) for row in masks[1:])


def test_a_build_that_draws_otherwise_gets_torchs_dropout(monkeypatch):
    monkeypatch.setattr(noise_module, "draws_as_torch", lambda: False)

    def fail(*args):
        raise AssertionError("the shortcut ran on a build that draws otherwise")

    monkeypatch.setattr("lipnorm_exp.nn.copy_dropout.dropout_noise", fail)
    x = torch.randn(50, 8)
    torch.manual_seed(2)
    theirs = F.dropout(x, 0.3, True)
    torch.manual_seed(2)
    assert torch.equal(dropout(x, 0.3, True), theirs)


def test_the_builds_check_agrees_with_a_larger_draw():
    """:func:`draws_as_torch` decides from 1,000 elements; 100,000 at another seed agree."""
    like = torch.empty(100_000)
    torch.manual_seed(7)
    theirs = torch.empty_like(like).bernoulli_(0.25).div_(0.25)
    torch.manual_seed(7)
    assert draws_as_torch() == torch.equal(dropout_noise(like, 0.75), theirs)
