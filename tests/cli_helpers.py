"""Helpers of the end-to-end tests: ``python -m lipnorm_exp`` in a subprocess, writing under a
temporary folder, with Cora prepared once beforehand (``conftest.data_dir``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

TINY = ("model.depth=1", "model.hidden=8", "model.heads=1", "train.epochs=2")
ERROR_PREFIX = "lipnorm_exp: error: "


def command(tmp_path: Path, data_dir: Path, *arguments: str, script: tuple = ()) -> list[str]:
    """``python -m lipnorm_exp`` writing under ``tmp_path``; later overrides win, flags go first.

    ``script`` replaces ``-m lipnorm_exp`` by a script and its first arguments.
    """
    flags = [argument for argument in arguments if argument.startswith("--")]
    overrides = [argument for argument in arguments if not argument.startswith("--")]
    return [
        sys.executable,
        *(script or ("-m", "lipnorm_exp")),
        *flags,
        "train.progress=false",
        "logger=none",
        f"paths.results_dir={tmp_path / 'runs'}",
        f"paths.log_dir={tmp_path / 'logs'}",
        f"paths.data_dir={data_dir}",
        *overrides,
    ]


def environment(**extra: str) -> dict[str, str]:
    """The test process's environment for a CLI subprocess: this checkout first on the path.

    Of the ``LIPNORM_`` variables only ``LIPNORM_RAW_DIRS`` (raw dataset files, see conftest)
    is kept.
    """
    kept = ("LIPNORM_RAW_DIRS",)
    env = {
        k: v for k, v in os.environ.items() if k in kept or not k.startswith(("LIPNORM_", "HYDRA_"))
    }
    path = os.pathsep.join(filter(None, (str(REPO), env.get("PYTHONPATH"))))
    return {**env, "PYTHONPATH": path, "WANDB_MODE": "disabled", "WANDB_SILENT": "true", **extra}


def start(args: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """The CLI in a subprocess from the checkout, output piped (``kwargs`` override, e.g.
    ``stderr=subprocess.STDOUT``)."""
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    return subprocess.Popen(args, cwd=REPO, env=env or environment(), **{**pipes, **kwargs})


def cli(
    args: list[str],
    timeout: float = 120,
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    **kwargs,
) -> subprocess.CompletedProcess:
    """``args`` run to the end in ``cwd`` (the checkout by default), output captured; ``env``:
    the environment (:func:`environment` by default); ``kwargs``: `subprocess.run`'s others."""
    return subprocess.run(
        args,
        cwd=cwd,
        env=env or environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def records(tmp_path: Path) -> dict[str, dict]:
    """Run id → record, for every record file of ``tmp_path``."""
    return {path.stem: json.loads(path.read_text()) for path in (tmp_path / "runs").glob("*.json")}


def tally_line(completed=0, diverged=0, skipped=0, failed=0, interrupted=0, total=None) -> str:
    counts = (completed, diverged, skipped, failed, interrupted)
    ended = "finished" if total is None and not interrupted else "stopped"
    return (
        f"sweep {ended}: {completed} completed, {diverged} diverged, {skipped} skipped, "
        f"{failed} failed, {interrupted} interrupted (of {total or sum(counts)})"
    )
