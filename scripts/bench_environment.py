"""What every benchmark writes above its table: the machine, the versions, the command."""

import datetime
import os
import platform
import sys
from pathlib import Path

import pandas as pd
import torch
import torch_geometric

from lipnorm_exp.records.provenance import git_commit, processor_model


def device_name(device: torch.device | str) -> str:
    """The GPU's name, or ``CPU (<processor model>)``."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU ({processor_model()})"


#: the checkout these scripts belong to
REPOSITORY = Path(__file__).resolve().parents[1]


def portable_argument(argument: str) -> str:
    """``argument`` as a committed file may show it, naming no folder of the machine it ran on.

    An absolute path inside the checkout is written relative to it; one outside it (a clone, a
    scratch folder) as ``<its last part>`` (``--checkout <LipschitzNorm>``). ``--option=<path>``
    likewise; any other argument as it is.
    """
    option, equals, value = (
        argument.rpartition("=") if argument.startswith("--") else ("", "", argument)
    )
    path = Path(value)
    if not path.is_absolute():
        return argument
    if path.resolve().is_relative_to(REPOSITORY):
        return f"{option}{equals}{path.resolve().relative_to(REPOSITORY)}"
    return f"{option}{equals}<{path.name}>"


def environment(device: torch.device | str = "cpu", **extra) -> dict:
    """Date, device, cores, threads, versions, ``extra`` settings and the command line.

    The command line names paths outside the checkout by their last part (`portable_argument`).
    """
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "device": device_name(device),
        "cpu_cores": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "torch_geometric": torch_geometric.__version__,
        "python": platform.python_version(),
        "commit": git_commit(),
        # processes ready to run, averaged over the minute before the benchmark started
        "load_average": round(os.getloadavg()[0], 1),
        **extra,
        "command": " ".join(["python", *map(portable_argument, sys.argv)]),
    }


def header(title: str, env: dict) -> list[str]:
    """The first lines of a benchmark's Markdown file: its title and ``env`` as a list."""
    return [f"# {title}", "", *(f"- {key}: `{value}`" for key, value in env.items())]


def write_results(out: Path, name: str, frame: pd.DataFrame, lines: list[str]) -> None:
    """``<out>/<name>.csv`` (the rows) and ``<out>/<name>.md`` (``lines``, then the table)."""
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / f"{name}.csv", index=False)
    table = frame.to_markdown(index=False, floatfmt=".3g")
    (out / f"{name}.md").write_text("\n".join([*lines, "", table]) + "\n")
    print(f"\nwrote {out / name}.csv and {out / name}.md\n{table}")
