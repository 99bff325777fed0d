"""An existing PyG model made Lipschitz with ``lipschitz_normalize``, trained on Cora.

PyG's ``GAT`` model (GAT or GATv2) or a ``Sequential`` of ``TransformerConv`` layers: every
``GATConv``, ``GATv2Conv`` and ``TransformerConv`` inside it becomes the library's drop-in with
the same weights and LipschitzNorm on its scores (paper Eqs. 17, 15, 19); the model is
otherwise PyG's own.

    python examples/pyg_model_lipschitz.py --model gat
    python examples/pyg_model_lipschitz.py --model transformer --norm none
"""

import argparse
import collections
import time

import torch
import torch.nn.functional as F
import torch_geometric.transforms as T
from example_data import DEFAULT_ROOT, load_planetoid
from torch_geometric.nn import Sequential, TransformerConv
from torch_geometric.nn.models import GAT

from lipnorm_exp.nn import lipschitz_normalize


def pyg_model(kind, in_channels, hidden, out_channels, heads, depth, dropout):
    """PyG's ``GAT`` (``v2`` for GATv2), or a ``Sequential`` of ``TransformerConv`` layers."""
    if kind in ("gat", "gatv2"):
        return GAT(
            in_channels, hidden * heads, depth, out_channels, dropout=dropout, heads=heads,
            v2=kind == "gatv2", act="elu",
        )  # fmt: skip
    widths = [in_channels] + [hidden * heads] * (depth - 1)
    layers = []
    for width in widths[:-1]:
        layers += [
            (torch.nn.Dropout(dropout), "x -> x"),
            (TransformerConv(width, hidden, heads, dropout=dropout), "x, edge_index -> x"),
            torch.nn.ELU(),
        ]
    layers += [
        (torch.nn.Dropout(dropout), "x -> x"),
        (TransformerConv(widths[-1], out_channels, heads=1), "x, edge_index -> x"),
    ]
    return Sequential("x, edge_index", layers)


def main(argv=None):
    """Build PyG's model, normalise it, train it and print one line per epoch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(DEFAULT_ROOT), help="Planetoid's root folder")
    parser.add_argument("--model", default="gat", choices=["gat", "gatv2", "transformer"])
    parser.add_argument("--norm", default="lip", choices=["lip", "none"])
    parser.add_argument("--alpha", type=float, default=1.0, help="LipschitzNorm's score bound")
    parser.add_argument("--depth", type=int, default=2, help="attention layers")
    parser.add_argument("--hidden", type=int, default=8, help="channels per head")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--dropout", type=float, default=0.6)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="3 epochs: a check that it runs")
    args = parser.parse_args(argv)
    if args.depth < 2:
        parser.error(f"--depth must be >= 2, got {args.depth}")
    epochs = 3 if args.smoke else args.epochs

    torch.manual_seed(args.seed)
    dataset = load_planetoid(args.root, "Cora", transform=T.NormalizeFeatures())
    data = dataset[0]
    model = pyg_model(
        args.model, dataset.num_features, args.hidden, dataset.num_classes, args.heads,
        args.depth, args.dropout,
    )  # fmt: skip
    before = collections.Counter(type(m).__name__ for m in model.modules())
    if args.norm == "lip":
        model = lipschitz_normalize(model, alpha=args.alpha)
    after = collections.Counter(type(m).__name__ for m in model.modules())
    swapped = dict(after - before)
    print(f"Layers swapped in: {swapped or 'none'}")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)

    best_val = test_at_best = 0.0
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            pred = model(data.x, data.edge_index).argmax(dim=-1)
        train_acc, val_acc, test_acc = (
            float((pred[mask] == data.y[mask]).float().mean())
            for mask in (data.train_mask, data.val_mask, data.test_mask)
        )
        if val_acc > best_val:
            best_val, test_at_best = val_acc, test_acc
        print(
            f"Epoch: {epoch:03d}, Loss: {loss.item():.4f}, Train: {train_acc:.4f}, "
            f"Val: {val_acc:.4f}, Test: {test_acc:.4f}, Time: {time.perf_counter() - start:.3f}s"
        )
    print(f"Best Val: {best_val:.4f}, Test at best Val: {test_at_best:.4f}")


if __name__ == "__main__":
    main()
