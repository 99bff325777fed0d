"""The authors' own ``DeepGAT``, trained from their code at their depth script's defaults.

Runs the model of https://github.com/gdasoulas/LipschitzNorm (Dasoulas, Scaman, Virmaux,
ICML 2021) from a checkout the user makes, at commit ``25ddec3c8daf28ec45eddff4ae0420ef239c8426``
(its last, "Update quadratic_lipschitznorm.py"); nothing of it is copied here:

    git clone https://github.com/gdasoulas/LipschitzNorm /path/LipschitzNorm
    git -C /path/LipschitzNorm checkout 25ddec3c8daf28ec45eddff4ae0420ef239c8426

Their ``models/deepgat.py`` (``DeepGAT``, its ``DeepGATConv`` and their ``LipschitzNorm``) and
``utils.accuracy`` are imported from the checkout; ``torch_scatter``/``torch_sparse`` come from
`authors_shims` where they are not installed. Their ``train_deepgat_depth.py`` cannot be imported
(it parses the command line and trains at import), so its loop is followed here statement by
statement: each epoch one Adam step on the training nodes, then an eval-mode forward whose
validation loss steps the scheduler; after the last epoch their ``test()`` evaluates the model.
The values, and where each comes from:

- ``--lr`` 0.005, ``--epochs`` 1000, ``--heads`` 8, ``--hidden`` 64 (channels per head),
  ``--dataset`` Cora, seeds 0..4 (their ``--nexps`` 5): their README's depth example
  (``python train_deepgat_depth.py --dataset Cora --hidden_dim 64 --heads 8 --nepoch 1000
  --lr 0.005``) read through their own ``parser.py`` (whose defaults fill the rest);
- weight decay 5e-4 (``torch.optim.Adam(..., weight_decay=0.0005)``), the scheduler
  ``ReduceLROnPlateau(optimizer)`` at PyTorch's defaults (factor 0.1, patience 10) stepped on
  the validation loss every epoch (their ``--lr_patience`` default 50 > 0 switches it on; its
  value is not used), no early stop (``--es_patience`` -1), ``CrossEntropyLoss`` on the model's
  log-softmax output, the final model's test accuracy and ``np.std`` over seeds:
  ``train_deepgat_depth.py``;
- feature dropout 0.6 before each layer, attention dropout 0.3, an input ``Linear`` to
  ``--hidden``: ``models/deepgat.py``;
- data: PyG's ``Planetoid(<datadir>/<Name>, <Name>)`` with no transform (public split, raw
  binary features), as their script loads it; the raw files are copied from
  ``$LIPNORM_RAW_DIRS`` (folders laid out as ``Planetoid/<Name>/raw``) where absent.

``--norm`` is their ``DeepGAT``'s ``norm``: ``none`` (GAT) or ``lipschitznorm`` (GAT-Lip,
their ``LipschitzNorm(scale_individually=False)``). Their depth script loops over ``None``,
``maxnorm``, ``pairnorm-si`` and ``pairnorm`` (``maxnorm`` builds no normalisation) and over
depths 1, 5, ..., 35; one setting is run here per call. The seed is this script's addition (their
scripts seed nothing): ``random``, ``numpy`` and ``torch`` are seeded before each model is built.
Evaluation runs under ``torch.no_grad()`` (the same values as theirs, less memory).

Reports per seed the final-epoch test accuracy (the authors' rule) and, for information, the test
accuracy at the first epoch of highest validation accuracy. ``--out DIR`` writes
``authors_deepgat_<setting>.json`` (the machine, versions, both commits, the command line, each
seed's history) and ``.md``:

    python scripts/authors_deepgat.py --checkout /path/LipschitzNorm --heads 4 \
        --norm lipschitznorm --seeds 0,1,2 --out results/authors_code
"""

import argparse
import contextlib
import importlib
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch
from authors_shims import install
from bench_environment import environment, header

from lipnorm_exp.config.resolvers import folder_list
from lipnorm_exp.data.download import ensure_files
from lipnorm_exp.data.planetoid import raw_file_names
from lipnorm_exp.util.errors import DataNotFoundError

COMMIT = "25ddec3c8daf28ec45eddff4ae0420ef239c8426"
REPOSITORY = "https://github.com/gdasoulas/LipschitzNorm"
#: their README's example for the depth setting (the arguments after the script's name)
README_DEPTH_EXAMPLE = "--dataset Cora --hidden_dim 64 --heads 8 --nepoch 1000 --lr 0.005"
#: hard-coded in their train_deepgat_depth.py's Adam (their --weight_decay is not read)
WEIGHT_DECAY = 5e-4
#: their DeepGAT's norm values that build a normalisation this script can run
NORMS = ("none", "lipschitznorm", "lipschitznorm-si", "pairnorm", "pairnorm-si")
#: our option → their parser's attribute (the README example's values fill our defaults)
THEIR_OPTION = {
    "dataset": "dataset",
    "hidden": "hidden_dim",
    "heads": "heads",
    "epochs": "nepoch",
    "lr": "lr",
}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusals are one line on stderr (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message}\n")


def seed_list(text: str) -> list[int]:
    """``"0,1,2"`` → ``[0, 1, 2]``."""
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give integers separated by commas") from None
    return seeds


def positive(text: str) -> int:
    """A positive integer option."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give an integer >= 1")
    return int(text)


def arguments() -> OneLineParser:
    """The command line; the options left ``None`` take their README example's values."""
    parser = OneLineParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--checkout", type=Path, required=True, help="their repository")
    parser.add_argument("--dataset", choices=("Cora", "CiteSeer", "PubMed"))
    parser.add_argument("--heads", type=positive)
    parser.add_argument("--hidden", type=positive, help="channels per head (their --hidden_dim)")
    parser.add_argument("--layers", type=positive, default=15)
    parser.add_argument("--epochs", type=positive)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--norm", choices=NORMS, default="none")
    parser.add_argument("--seeds", type=seed_list, help="comma-separated (default 0..nexps-1)")
    parser.add_argument("--threads", type=positive, default=1)
    parser.add_argument("--datadir", type=Path, default=Path("data/authors"))
    parser.add_argument("--out", type=Path, help="folder for the .json and .md results")
    parser.add_argument("--log-every", type=positive, default=100, help="epochs between lines")
    return parser


def checkout_refusal(checkout: Path) -> str | None:
    """Why ``checkout`` is not their repository at `COMMIT` with no tracked file changed."""
    clone = f"git clone {REPOSITORY} {checkout} && git -C {checkout} checkout {COMMIT}"
    if not (checkout / "models" / "deepgat.py").is_file():
        return f"--checkout={checkout}: not a checkout of {REPOSITORY}; run: {clone}"
    git = ["git", "-C", str(checkout)]
    git_c = " ".join(git)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode or head.stdout.strip() != COMMIT:
        found = head.stdout.strip() or "no git commit"
        return f"--checkout={checkout}: at {found}, not {COMMIT}; run: {git_c} checkout {COMMIT}"
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    ).stdout.splitlines()
    if changed:
        files = " ".join(line[3:] for line in changed)
        return f"--checkout={checkout}: tracked files changed ({files}); run: {git_c} checkout -- ."
    return None


@contextlib.contextmanager
def argv(values: list[str]) -> Iterator[None]:
    """``sys.argv`` set to ``values`` for the block (their parser reads it)."""
    saved = sys.argv
    sys.argv = values
    try:
        yield
    finally:
        sys.argv = saved


def their_modules(checkout: Path) -> tuple[dict[str, str], ModuleType, ModuleType, Any]:
    """Stand-ins installed, then their ``models.deepgat``, ``utils`` and README example options."""
    used = install()
    sys.path.insert(0, str(checkout))
    deepgat, utils, their_parser = map(
        importlib.import_module, ("models.deepgat", "utils", "parser")
    )

    with argv(["train_deepgat_depth.py", *README_DEPTH_EXAMPLE.split()]):
        options = their_parser.parser()
    return used, deepgat, utils, options


def planetoid(name: str, datadir: Path) -> Any:
    """Their data: ``Planetoid(<datadir>/<name>, <name>)``, raw files copied in where absent."""
    from torch_geometric.datasets import Planetoid

    raw_dirs = [
        Path(folder) / "Planetoid" for folder in folder_list(os.environ.get("LIPNORM_RAW_DIRS", ""))
    ]
    ensure_files(
        name,
        datadir / name,
        f"{name}/raw",
        raw_file_names(name),
        raw_dirs=raw_dirs,
        url=Planetoid.url,
    )
    return Planetoid(str(datadir / name), name, transform=None)


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


def mean_std(values: list[float]) -> str:
    """``mean ± np.std`` (the population std, as their script reports)."""
    return f"{np.mean(values):.1f} ± {np.std(values):.1f}"


def report(results: list[dict[str, Any]], env: dict[str, Any], out: Path | None, name: str) -> None:
    """The per-seed table and the summary, printed and (with ``out``) written as .md and .json."""
    keys = [key for key in results[0] if key != "history"]
    table = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for result in results:
        cells = [
            f"{result[key]:.4g}" if isinstance(result[key], float) else str(result[key])
            for key in keys
        ]
        table.append("| " + " | ".join(cells) + " |")
    summary = (
        f"final-epoch test accuracy (their rule): {mean_std([r['final_test'] for r in results])}; "
        f"at the best validation epoch: {mean_std([r['test_at_best_val'] for r in results])} "
        f"(seeds {', '.join(str(r['seed']) for r in results)}; mean ± np.std)"
    )
    lines = [*header(f"The authors' DeepGAT: {name}", env), "", *table, "", summary]
    print("\n".join(lines[-len(table) - 2 :]))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.md").write_text("\n".join(lines) + "\n")
        (out / f"{name}.json").write_text(json.dumps({**env, "results": results}, indent=1) + "\n")
        print(f"wrote {out / name}.md and .json")


def main() -> int:
    """Train the asked setting's seeds; 2 where the checkout or the data is refused."""
    args = arguments().parse_args()
    refusal = checkout_refusal(args.checkout.resolve())
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    used, deepgat, utils, options = their_modules(args.checkout.resolve())
    values = {ours: getattr(args, ours) for ours in THEIR_OPTION}
    sources = {}
    for ours, theirs in THEIR_OPTION.items():
        if values[ours] is None:
            values[ours] = getattr(options, theirs)
            sources[ours] = "their README's depth example through their parser.py"
        else:
            sources[ours] = "this command line"
    seeds = args.seeds if args.seeds is not None else list(range(options.nexps))
    try:
        dataset = planetoid(values["dataset"], args.datadir)
    except DataNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    data = dataset[0]
    norm = None if args.norm == "none" else args.norm
    setting = (
        f"{values['dataset']}, {args.layers} layers, {values['heads']} heads x {values['hidden']}, "
        f"norm {args.norm}, lr {values['lr']}, {values['epochs']} epochs, seeds {seeds}"
    )
    print(setting, flush=True)

    def build() -> torch.nn.Module:
        return deepgat.DeepGAT(
            idim=dataset.num_features,
            hdim=values["hidden"],
            odim=dataset.num_classes,
            heads=values["heads"],
            num_layers=args.layers,
            norm=norm,
        )

    results = []
    for seed in seeds:
        results.append(
            train_seed(
                build, utils.accuracy, data, values["lr"], values["epochs"], seed, args.log_every
            )
        )
        print(
            f"seed {seed}: final test {results[-1]['final_test']:.1f}, at best val "
            f"{results[-1]['test_at_best_val']:.1f} "
            f"({results[-1]['seconds_per_epoch']:.2f} s/epoch)",
            flush=True,
        )
    env = environment(
        authors_repository=REPOSITORY,
        authors_commit=COMMIT,
        stand_ins=used,
        setting=setting,
        weight_decay=WEIGHT_DECAY,
        sources=sources,
    )
    name = (
        f"authors_deepgat_{values['dataset'].lower()}_{args.norm}_L{args.layers}_"
        f"{values['heads']}x{values['hidden']}_e{values['epochs']}"
    )
    report(results, env, args.out, name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
