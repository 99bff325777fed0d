"""One run's gradient norms as a heat map: layers × epochs, log colour scale.

Fig. 2's panel (`lipnorm_exp.report.figures`) and the W&B images of a run
(`lipnorm_exp.cli.tracking`) are both drawn by `draw_gradient_heatmap`: the norms of
the attention parameters' gradients (``grad_attn``, Fig. 2) or of the whole layer's
(``grad_layer``), both in a run's history where ``train.track_gradients`` is on.
"""

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.image import AxesImage
from matplotlib.ticker import MaxNLocator

from lipnorm_exp.records.schema import EPOCH, GRAD_ATTN, EpochRow, epoch_value

__all__ = ["BLANK_CELLS", "draw_gradient_heatmap", "gradient_matrix", "log_norm"]

#: what a blank (white) cell of `draw_gradient_heatmap` stands for
BLANK_CELLS = "white: a norm of exactly 0, or not finite (no colour on a log scale)"


def gradient_matrix(history: list[EpochRow], key: str = GRAD_ATTN) -> tuple[np.ndarray, np.ndarray]:
    """Epoch numbers and the ``[layers, epochs]`` gradient norms ``key`` of one run.

    ``key``: ``grad_attn`` (the attention parameters', the default) or ``grad_layer``.
    """
    epochs = [epoch for epoch in history if key in epoch]
    values = np.array([epoch_value(epoch, key) for epoch in epochs], dtype=float).T
    return np.array([epoch[EPOCH] for epoch in epochs]), values


def log_norm(values: np.ndarray) -> LogNorm:
    """Log colour scale over the positive finite ``values`` (a unit range when none)."""
    positive = values[np.isfinite(values) & (values > 0)]
    return LogNorm(*(positive.min(), positive.max()) if positive.size else (1e-12, 1.0))


def draw_gradient_heatmap(
    ax: Axes, history: list[EpochRow], norm: LogNorm | None = None, key: str = GRAD_ATTN
) -> AxesImage:
    """One run's gradient norms on ``ax``: layers × epochs, log colour scale.

    Args:
        ax: the axes to draw on (labelled ``epoch`` and ``layer``; the title is the caller's).
        history: the run's per-epoch rows; those with ``key`` are drawn.
        norm: a colour scale shared between panels; by default one over this run's values.
        key: which norms: ``grad_attn`` (the attention parameters', the default) or
            ``grad_layer`` (the whole layer's).

    Returns:
        The image, for a colour bar. Zero and non-finite norms are left blank
        (`BLANK_CELLS`): they are the masked values of its array.
    """
    epochs, grads = gradient_matrix(history, key)
    shown = np.ma.masked_where(~np.isfinite(grads) | (grads <= 0), grads)
    extent = (epochs[0] - 0.5, epochs[-1] + 0.5, 0.5, grads.shape[0] + 0.5)
    if norm is None:
        norm = log_norm(grads)
    image = ax.imshow(shown, aspect="auto", origin="lower", norm=norm, extent=extent)
    ax.set(xlabel="epoch", ylabel="layer")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return image
