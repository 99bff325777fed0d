"""Their ``train_deepgat_depth.py`` loop for one seed, followed statement by statement.

Each epoch one Adam step on the training nodes (weight decay `WEIGHT_DECAY`), then an eval-mode
forward whose validation loss steps ``ReduceLROnPlateau(optimizer)`` at PyTorch's defaults (their
``--lr_patience`` default 50 > 0 switches it on); no early stop (their ``--es_patience`` -1); after
the last epoch their ``test()`` evaluates the final model. Evaluation runs under
``torch.no_grad()`` (the same values as theirs, less memory). The seed is this project's
addition: their scripts seed nothing (``random``, ``numpy`` and ``torch`` are seeded before the
model is built).
"""

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

#: hard-coded in their train_deepgat_depth.py's Adam (their --weight_decay is not read)
WEIGHT_DECAY = 5e-4


def train_seed(
    build: Callable[[], torch.nn.Module],
    accuracy: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    data: Any,
    lr: float,
    epochs: int,
    seed: int,
    log_every: int,
) -> dict[str, Any]:
    """One seed trained as their ``train_deepgat_depth.py`` trains: the history and the results."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = build()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=WEIGHT_DECAY)
    criterion = torch.nn.CrossEntropyLoss()
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    history = []
    started = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        output = model(data)
        loss_train = criterion(output[data.train_mask], data.y[data.train_mask])
        acc_train = accuracy(output[data.train_mask], data.y[data.train_mask])
        loss_train.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            output = model(data)
        loss_val = criterion(output[data.val_mask], data.y[data.val_mask])
        scheduler.step(loss_val)
        row = {
            "epoch": epoch,
            "loss_train": loss_train.item(),
            "loss_val": loss_val.item(),
            "acc_train": accuracy(output[data.train_mask], data.y[data.train_mask]).item(),
            "acc_train_step": acc_train.item(),
            "acc_val": accuracy(output[data.val_mask], data.y[data.val_mask]).item(),
            "acc_test": accuracy(output[data.test_mask], data.y[data.test_mask]).item(),
            "lr": optimizer.param_groups[0]["lr"],
        }
        history.append(row)
        if (epoch + 1) % log_every == 0:
            print(
                f"  seed {seed} epoch {epoch + 1}: val {row['acc_val']:.3f} "
                f"test {row['acc_test']:.3f} lr {row['lr']:.1e}",
                flush=True,
            )
    seconds = time.perf_counter() - started
    model.eval()
    with torch.no_grad():  # their test(): the final model
        output = model(data)
    final = accuracy(output[data.test_mask], data.y[data.test_mask]).item()
    best = max(history, key=lambda row: (row["acc_val"], -row["epoch"]))
    cuts = [row["epoch"] for row in history if row["lr"] < lr]
    return {
        "seed": seed,
        "final_test": 100 * final,
        "test_at_best_val": 100 * best["acc_test"],
        "best_val_epoch": best["epoch"],
        "best_val": 100 * best["acc_val"],
        "final_train": 100 * history[-1]["acc_train"],
        "first_lr_cut_epoch": cuts[0] if cuts else None,
        "final_lr": history[-1]["lr"],
        "seconds_per_epoch": seconds / epochs,
        "history": history,
    }
