"""One JSON record per run, named by the run's hash, written atomically.

A record holds the whole resolved config (its ``paths`` relative to ``paths.root_dir`` where
they lie under it, so a record reads the same on every machine), the status (``completed``,
``diverged`` or ``failed`` with its error), summary metrics, the per-epoch history, timings,
versions and the git commit. It is written to a temporary file in the same folder and renamed
into place, so parallel workers never collide and a kill never leaves half a record.
"""

import json
import os
import platform
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch_geometric

import lipnorm_exp

#: statuses that are a result: a re-launched sweep does not run them again (``force=true`` does)
FINISHED = ("completed", "diverged")


def record_path(results_dir: str | Path, run_id: str) -> Path:
    """Where the record of ``run_id`` lives."""
    return Path(results_dir) / f"{run_id}.json"


def read_record(results_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """The record of ``run_id``, or ``None`` if there is none (or it cannot be parsed)."""
    path = record_path(results_dir, run_id)
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def write_record(results_dir: str | Path, record: dict[str, Any]) -> Path:
    """Write ``record`` as ``<results_dir>/<run_id>.json`` via temp file + rename."""
    path = record_path(results_dir, record["run_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes it private; a record is for everyone to read
        with os.fdopen(fd, "w") as handle:
            json.dump(record, handle, indent=1, allow_nan=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def portable_paths(paths: dict[str, Any]) -> dict[str, Any]:
    """``paths`` of a resolved config with every folder written under ``root_dir`` relative to it.

    ``root_dir`` itself becomes ``"."`` and ``<root>/../shared/datasets`` ``../shared/datasets``;
    folders elsewhere (``LIPNORM_DATA_DIR``, a temporary folder) stay as they are.
    """
    root = paths["root_dir"]

    def relative(value: Any) -> Any:
        if isinstance(value, list):
            return [relative(item) for item in value]
        if isinstance(value, str) and (value == root or value.startswith(root + os.sep)):
            return os.path.relpath(value, root)
        return value

    return {key: relative(value) for key, value in paths.items()}


def versions() -> dict[str, str]:
    """Versions of the software that produced a record."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_geometric": torch_geometric.__version__,
        "lipnorm_exp": lipnorm_exp.__version__,
    }


def git_commit() -> str | None:
    """The commit of the checkout the package runs from, if it is one."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
