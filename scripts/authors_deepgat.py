"""The authors' own ``DeepGAT``, trained from their code at their depth script's defaults.

Runs the model of https://github.com/gdasoulas/LipschitzNorm (Dasoulas, Scaman, Virmaux,
ICML 2021) from a checkout the user makes, at commit ``25ddec3c8daf28ec45eddff4ae0420ef239c8426``
(its last, "Update quadratic_lipschitznorm.py"); nothing of it is copied here:

    git clone https://github.com/gdasoulas/LipschitzNorm /path/LipschitzNorm
    git -C /path/LipschitzNorm checkout 25ddec3c8daf28ec45eddff4ae0420ef239c8426

Their ``models/deepgat.py`` (``DeepGAT``, its ``DeepGATConv`` and their ``LipschitzNorm``) and
``utils.accuracy`` are imported from the checkout (`authors_checkout`); ``torch_scatter`` and
``torch_sparse`` come from `authors_shims` where they are not installed. Their
``train_deepgat_depth.py`` cannot be imported (it parses the command line and trains at import),
so its loop is followed statement by statement (`authors_training`). The values, and where each
comes from:

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

Reports per seed the final-epoch test accuracy (the authors' rule) and, for information, the test
accuracy at the first epoch of highest validation accuracy. ``--out DIR`` writes each seed's
result as it ends, ``authors_deepgat_<setting>_seed<k>.json`` (the machine, versions, both
commits, the command line, the values and their sources, the seed's history; the same command run
again takes a finished seed from there, so a killed run resumes), then
``authors_deepgat_<setting>.md`` over the seeds asked:

    python scripts/authors_deepgat.py --checkout /path/LipschitzNorm --heads 4 \
        --norm lipschitznorm --seeds 0,1,2 --out results/authors_code
"""

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from authors_checkout import COMMIT, REPOSITORY, checkout_refusal

from lipnorm_exp.cli.file_arguments import output_folder
from lipnorm_exp.util.commands import (
    OneLineParser,
    distinct_seeds,
    positive_int,
    positive_number,
)

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


def arguments() -> OneLineParser:
    """The command line; the options left ``None`` take their README example's values."""
    parser = OneLineParser(
        description=__doc__.split("\n", 1)[0], error_prefix="authors_deepgat.py: error: "
    )
    parser.add_argument("--checkout", type=Path, required=True, help="their repository")
    parser.add_argument("--dataset", choices=("Cora", "CiteSeer", "PubMed"))
    parser.add_argument("--heads", type=positive_int)
    parser.add_argument(
        "--hidden", type=positive_int, help="channels per head (their --hidden_dim)"
    )
    parser.add_argument("--layers", type=positive_int, default=15)
    parser.add_argument("--epochs", type=positive_int)
    parser.add_argument("--lr", type=positive_number)
    parser.add_argument("--norm", choices=NORMS, default="none")
    parser.add_argument("--seeds", type=distinct_seeds, help="comma-separated (default 0..nexps-1)")
    parser.add_argument("--threads", type=positive_int, default=1)
    parser.add_argument(
        "--datadir",
        type=output_folder,
        help="their Planetoid folder (default: authors/ in a run's paths.data_dir, "
        "LIPNORM_DATA_DIR or data/)",
    )
    parser.add_argument("--out", type=output_folder, help="folder for the .json and .md results")
    parser.add_argument("--log-every", type=positive_int, default=100, help="epochs between lines")
    return parser


def run_data_dir() -> Path:
    """The data folder a run of the default config reads (its ``paths.data_dir``)."""
    from lipnorm_exp.config import config_dir
    from lipnorm_exp.report.grids import compose_config

    return Path(compose_config(config_dir(), ()).paths.data_dir)


def mean_std(values: list[float]) -> str:
    """``mean ± std`` with the population std (their script's ``np.std``)."""
    return f"{statistics.mean(values):.1f} ± {statistics.pstdev(values):.1f}"


def table(results: list[dict[str, Any]]) -> list[str]:
    """The per-seed results (histories left out) as Markdown lines, then the summary line."""
    keys = [key for key in results[0] if key != "history"]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for result in results:
        cells = [
            f"{value:.4g}" if isinstance(value, float) else str(value)
            for value in (result[key] for key in keys)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    finals = [result["final_test"] for result in results]
    at_best = [result["test_at_best_val"] for result in results]
    seeds = ", ".join(str(result["seed"]) for result in results)
    summary = (
        f"final-epoch test accuracy (their rule): {mean_std(finals)}; at the best validation "
        f"epoch: {mean_std(at_best)} (seeds {seeds}; mean ± np.std)"
    )
    return [*lines, "", summary]


def finished_seed(path: Path, setting: dict[str, Any]) -> dict[str, Any] | None:
    """The result ``path`` holds for this same setting, or ``None``."""
    if not path.is_file():
        return None
    stored = json.loads(path.read_text())
    return stored["result"] if stored["setting"] == setting else None


def main() -> int:
    """Train the asked setting's seeds; 2 where the checkout or the data is refused.

    With ``--out``, each seed's result is written as it ends (``<name>_seed<k>.json``) and taken
    from there when the same command runs again: a killed run resumes at its first unfinished
    seed.
    """
    args = arguments().parse_args()
    refusal = checkout_refusal(args.checkout.resolve())
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    # torch and PyG only now: a refusal above takes no time
    import torch
    from authors_checkout import planetoid, their_modules
    from authors_training import WEIGHT_DECAY, train_seed
    from bench_environment import environment, header

    from lipnorm_exp.util.atomic import write_whole
    from lipnorm_exp.util.errors import DataNotFoundError

    torch.set_num_threads(args.threads)
    used, deepgat, utils, options = their_modules(args.checkout.resolve())
    values = {ours: getattr(args, ours) for ours in THEIR_OPTION}
    sources = {ours: "this command line" for ours, value in values.items() if value is not None}
    for ours, theirs in THEIR_OPTION.items():
        if values[ours] is None:
            values[ours] = getattr(options, theirs)
            sources[ours] = "their README's depth example through their parser.py"
    seeds = args.seeds if args.seeds is not None else list(range(options.nexps))
    try:
        dataset = planetoid(values["dataset"], args.datadir or run_data_dir() / "authors")
    except DataNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    setting = {
        **values,
        "layers": args.layers,
        "norm": args.norm,
        "weight_decay": WEIGHT_DECAY,
        "authors_commit": COMMIT,
    }
    name = (
        f"authors_deepgat_{values['dataset'].lower()}_{args.norm}_L{args.layers}_"
        f"{values['heads']}x{values['hidden']}_e{values['epochs']}"
    )
    env = environment(
        authors_repository=REPOSITORY, stand_ins=used, setting=setting, sources=sources
    )
    print(f"{name}: seeds {seeds}", flush=True)

    def build() -> torch.nn.Module:
        return deepgat.DeepGAT(
            idim=dataset.num_features,
            hdim=values["hidden"],
            odim=dataset.num_classes,
            heads=values["heads"],
            num_layers=args.layers,
            norm=None if args.norm == "none" else args.norm,
        )

    results = []
    for seed in seeds:
        path = None if args.out is None else args.out / f"{name}_seed{seed}.json"
        result = None if path is None else finished_seed(path, setting)
        if result is None:
            result = train_seed(
                build,
                utils.accuracy,
                dataset[0],
                values["lr"],
                values["epochs"],
                seed,
                args.log_every,
            )
            if path is not None:
                write_whole(path, json.dumps({**env, "result": result}, indent=1) + "\n")
        results.append(result)
        print(
            f"seed {seed}: final test {result['final_test']:.1f}, at best val "
            f"{result['test_at_best_val']:.1f} ({result['seconds_per_epoch']:.2f} s/epoch)"
            + ("" if path is None else f"; {path}"),
            flush=True,
        )
    lines = table(results)
    print("\n".join(lines))
    if args.out is not None:
        markdown = [*header(f"The authors' DeepGAT: {name}", env), "", *lines]
        write_whole(args.out / f"{name}.md", "\n".join(markdown) + "\n")
        print(f"wrote {args.out / name}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
