"""Where a run record comes from: portable paths, software versions, commit and machine.

torch and PyG are imported inside the functions that name them, so that readers of records
(the report) do not load them.
"""

import os
import platform
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import lipnorm_exp
from lipnorm_exp.records.schema import Machine, Versions

#: where Linux describes its processors
CPUINFO = Path("/proc/cpuinfo")


def portable_paths(paths: dict[str, Any]) -> dict[str, Any]:
    """``paths`` of a resolved config with every folder written relative to ``root_dir``.

    ``root_dir`` itself becomes ``"."``, ``<root>/data`` ``data``, and a folder outside the
    checkout (a mirror that ``LIPNORM_RAW_DIRS`` names, ``LIPNORM_DATA_DIR``, a temporary
    folder) the way up to it: ``../raw/datasets`` for ``<root>/../raw/datasets`` or for
    ``/srv/raw/datasets`` beside a root ``/srv/lipnorm``. A record then names no folder of
    the machine it ran on above its checkout, and records made in two checkouts of one layout
    name the same folders. A folder with no way there from the root (another drive on Windows)
    stays as it is.
    """
    root = paths["root_dir"]

    def relative(value: Any) -> Any:
        if isinstance(value, list):
            return [relative(item) for item in value]
        if isinstance(value, str) and os.path.isabs(value):
            try:
                return os.path.relpath(value, root)
            except ValueError:
                return value
        return value

    return {key: relative(value) for key, value in paths.items()}


def versions() -> Versions:
    """Versions of the software that produced a record."""
    import torch
    import torch_geometric

    return Versions(
        python=platform.python_version(),
        torch=torch.__version__,
        torch_geometric=torch_geometric.__version__,
        lipnorm_exp=lipnorm_exp.__version__,
    )


def machine(device: Any) -> Machine:
    """The machine a run ran on.

    Args:
        device (torch.device): the device it trained on.

    Returns:
        Machine: ``device`` (``cpu``, or ``cuda:<index> <GPU name>``), ``cpus`` (logical CPU
        cores), ``processor`` (the platform's processor name, or its architecture),
        ``processor_model`` (`processor_model`), ``threads`` (torch's intra-op threads)
        and, in a SLURM job only, ``slurm_job`` (`slurm_job`). The processor model and
        the threads tell a rounding difference between machines from a change of code.
    """
    import torch

    from lipnorm_exp.util.device import cuda_index

    name = str(device)
    if device.type == "cuda":
        index = cuda_index(device)
        name = f"cuda:{index} {torch.cuda.get_device_name(index)}"
    facts = Machine(
        device=name,
        cpus=os.cpu_count(),
        processor=platform.processor() or platform.machine(),
        processor_model=processor_model(),
        threads=torch.get_num_threads(),
    )
    job = slurm_job()
    if job is not None:
        facts["slurm_job"] = job
    return facts


def processor_model(cpuinfo: Path = CPUINFO) -> str:
    """The processor's model: ``model name`` of ``cpuinfo`` on Linux, else the platform's name.

    ``Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz``, say; the architecture where neither
    names one.
    """
    try:
        lines = cpuinfo.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or platform.machine()


def slurm_job() -> str | None:
    """The SLURM job this process runs in, as ``sacct`` and ``squeue`` name it, or ``None``.

    A task of a job array (a sweep's jobs) is ``<array job id>_<task id>``; any other job its
    ``SLURM_JOB_ID``.
    """
    array_job, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    if array_job and task:
        return f"{array_job}_{task}"
    return os.environ.get("SLURM_JOB_ID")


@cache
def git_commit() -> str | None:
    """The commit of the checkout the package runs from, if it is one.

    Read once per process, at the first call (a command's start): the code a process runs is
    the code it imported, so a commit made while it runs (a long sweep or verification) does not
    become the commit its later records and findings name.
    """
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


__all__ = [
    "CPUINFO",
    "git_commit",
    "machine",
    "portable_paths",
    "processor_model",
    "slurm_job",
    "versions",
]
