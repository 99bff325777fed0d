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


def environment(device: torch.device | str = "cpu", **extra) -> dict:
    """Date, device, cores, threads, versions, ``extra`` settings and the command line."""
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
        "command": " ".join(["python", *sys.argv]),
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
