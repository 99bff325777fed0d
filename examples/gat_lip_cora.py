"""GAT-Lip on Cora: a deep GAT whose attention scores LipschitzNorm bounds (paper Eq. 17).

Only ``lipnorm_exp.nn`` and PyG: no Hydra, no records. ``--norm none`` trains the same GAT
without the norm, ``--depth`` sets the number of attention layers.

    python examples/gat_lip_cora.py                       # 2 layers, LipschitzNorm
    python examples/gat_lip_cora.py --depth 10 --norm none
"""

import argparse
import time

import torch
import torch.nn.functional as F
import torch_geometric.transforms as T
from example_data import DEFAULT_ROOT, load_planetoid

from lipnorm_exp.nn import GATLayer, GATLipschitzNorm


class GAT(torch.nn.Module):
    """``depth`` GAT layers with ELU between them; the last one averages its heads."""

    def __init__(self, in_channels, hidden, out_channels, heads, depth, dropout, norm, alpha):
        super().__init__()
        self.dropout = dropout
        widths = [in_channels] + [hidden * heads] * (depth - 1)

        def score_norm():  # LipschitzNorm bounds each layer's scores by alpha (paper Eq. 17)
            return GATLipschitzNorm(alpha=alpha) if norm == "lip" else None

        self.convs = torch.nn.ModuleList(
            GATLayer(width, hidden, heads, dropout=dropout, norm=score_norm())
            for width in widths[:-1]
        )
        self.convs.append(
            GATLayer(
                widths[-1], out_channels, heads=1, concat=False, dropout=dropout, norm=score_norm()
            )
        )

    def forward(self, x, edge_index):
        """Class logits of every node."""
        for k, conv in enumerate(self.convs):
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = conv(x, edge_index)
            if k < len(self.convs) - 1:
                x = F.elu(x)
        return x


def train(model, optimizer, data):
    """One full-batch step on the training nodes; the loss."""
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def test(model, data):
    """Accuracy on the training, validation and test nodes."""
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    return [
        float((pred[mask] == data.y[mask]).float().mean())
        for mask in (data.train_mask, data.val_mask, data.test_mask)
    ]


def main(argv=None):
    """Train and print one line per epoch, then the test accuracy at the best validation one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(DEFAULT_ROOT), help="Planetoid's root folder")
    parser.add_argument("--dataset", default="Cora", choices=["Cora", "CiteSeer", "PubMed"])
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
    if args.depth < 1:
        parser.error(f"--depth must be >= 1, got {args.depth}")
    epochs = 3 if args.smoke else args.epochs

    torch.manual_seed(args.seed)
    dataset = load_planetoid(args.root, args.dataset, transform=T.NormalizeFeatures())
    data = dataset[0]
    model = GAT(
        dataset.num_features, args.hidden, dataset.num_classes, args.heads, args.depth,
        args.dropout, args.norm, args.alpha,
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)

    best_val = test_at_best = 0.0
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        loss = train(model, optimizer, data)
        train_acc, val_acc, test_acc = test(model, data)
        if val_acc > best_val:
            best_val, test_at_best = val_acc, test_acc
        print(
            f"Epoch: {epoch:03d}, Loss: {loss:.4f}, Train: {train_acc:.4f}, Val: {val_acc:.4f}, "
            f"Test: {test_acc:.4f}, Time: {time.perf_counter() - start:.3f}s"
        )
    print(f"Best Val: {best_val:.4f}, Test at best Val: {test_at_best:.4f}")


if __name__ == "__main__":
    main()
