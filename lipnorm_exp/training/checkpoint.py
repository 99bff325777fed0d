"""Resumable runs: a run's state between two epochs, kept on disk until its record is final.

A checkpoint holds everything that decides what a run does next: the model's parameters and
buffers, the optimiser's moments and step counts, the learning-rate schedule, the early stop,
the history and best epoch so far (`state_dict`), and
every random state the run draws from (`random_state`: Python's, NumPy's, torch's CPU and
CUDA generators, the generators a task shuffles its batches with, and the dropout stream of a
copy trained among others). Restored, a run goes on as if it had never stopped: on a CPU the
record it writes equals that of an uninterrupted run bit for bit, timings aside.

One file per run, ``<results_dir>/.checkpoints/<run_id>.pt``, written whole or not at all
(`replacing`) every ``train.checkpoint_every`` epochs, and when the
run stops on a signal (SIGTERM, SIGHUP, Ctrl-C) or an error: then from the state at the end of its
last whole epoch, which `Checkpoint` keeps in memory, since the epoch under way is half
done. The next launch of the same run resumes from it; ``force=true`` starts over. The file is
removed once the run's final record (``completed`` or ``diverged``) is written. A file that
cannot be read, or that another run wrote, is set aside (``<name>.broken-<UTC time>``) with a
warning and never loaded. The file carries the SHA-256 of its contents (`encode`), so a
file changed after it was written (one flipped byte) is set aside too, never resumed from.
``checkpoint_every=0`` keeps no checkpoint at all.
"""

import hashlib
import io
import logging
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from lipnorm_exp.records import set_aside
from lipnorm_exp.training.finished import CHECKPOINT_DIR, checkpoint_path
from lipnorm_exp.util.atomic import replacing

__all__ = [
    "CHECKPOINT_DIR",
    "FORMAT",
    "Checkpoint",
    "checkpoint_path",
    "copied",
    "decode",
    "encode",
    "model_state",
    "random_state",
    "restore",
    "set_random_state",
    "snapshot",
]

log = logging.getLogger(__name__)

#: the layout of a checkpoint's dictionary; a checkpoint of another layout is set aside
FORMAT = 2
#: what a checkpoint file starts with, before the SHA-256 of the rest (`encode`)
MAGIC = b"lipnorm_exp checkpoint\n"


def encode(state: dict[str, Any]) -> bytes:
    """A checkpoint file's bytes: `MAGIC`, the SHA-256 of the saved state, the state."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    payload = buffer.getvalue()
    return MAGIC + hashlib.sha256(payload).digest() + payload


def decode(data: bytes) -> Any:
    """What `encode` encoded.

    Raises:
        ValueError: ``data`` lacks the header, or its contents do not match their checksum.
    """
    if not data.startswith(MAGIC):
        raise ValueError("no checksum header (an older layout, or not a checkpoint)")
    digest, payload = data[len(MAGIC) : len(MAGIC) + 32], data[len(MAGIC) + 32 :]
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError("its contents do not match their SHA-256 checksum (changed on disk)")
    return torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)


def copied(state: Any) -> Any:
    """``state`` (dicts and lists of tensors and values) with every tensor cloned.

    What training on changes in place is the tensors; the rest is rebuilt or immutable. Several
    times faster than ``copy.deepcopy`` on an optimiser's state.
    """
    if isinstance(state, torch.Tensor):
        return state.detach().clone()
    if isinstance(state, dict):
        return {key: copied(value) for key, value in state.items()}
    if isinstance(state, list):
        return [copied(value) for value in state]
    return state


def model_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A copy of ``model``'s parameters and buffers (its ``state_dict``, cloned)."""
    return copied(model.state_dict())


def random_state(generators: Sequence[torch.Generator] = ()) -> dict[str, Any]:
    """Every random state a run draws from: Python's, NumPy's, torch's, and ``generators``'.

    The result holds only what ``torch.load(weights_only=True)`` reads back (NumPy's key
    table as a tensor).
    """
    legacy = cast(tuple[str, np.ndarray, int, int, float], np.random.get_state(legacy=True))
    name, keys, position, has_gauss, gauss = legacy
    return {
        "python": random.getstate(),
        "numpy": (name, torch.from_numpy(keys.astype(np.int64)), position, has_gauss, gauss),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else [],
        "generators": [generator.get_state() for generator in generators],
    }


def set_random_state(state: dict[str, Any], generators: Sequence[torch.Generator] = ()) -> None:
    """Restore what `random_state` returned, ``generators`` included."""
    random.setstate(state["python"])
    name, keys, position, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), position, has_gauss, gauss))
    torch.set_rng_state(state["torch"])
    if state["cuda"]:
        torch.cuda.set_rng_state_all(state["cuda"])
    for generator, saved in zip(generators, state["generators"], strict=True):
        generator.set_state(saved)


def snapshot(
    model: torch.nn.Module, run, generators: Sequence[torch.Generator] = (), **extra: Any
) -> dict[str, Any]:
    """A copy of one run's state now: ``model``, ``run``, the random states, ``extra``.

    ``run`` is the run's `RunState`.
    """
    return {
        "model": model_state(model),
        "run": run.state_dict(),
        "random": random_state(generators),
        **extra,
    }


def restore(
    saved: dict[str, Any],
    model: torch.nn.Module,
    run,
    generators: Sequence[torch.Generator] = (),
) -> None:
    """Put what `snapshot` copied back into ``model``, ``run`` and the random states."""
    model.load_state_dict(saved["model"])
    run.load_state_dict(saved["run"])
    set_random_state(saved["random"], generators)


#: what a checkpoint holds beside its layout and run id, and of which type (what resuming reads)
STATE_PARTS: dict[str, type | tuple[type, ...]] = {
    "epoch": int,
    "resumed_at": list,
    "elapsed_s": (int, float),
    "model": dict,
    "run": dict,
    "random": dict,
}


class Checkpoint:
    """Run ``rid``'s checkpoint: found and loaded at its start, kept and written as it trains.

    Args:
        results_dir: the folder of the run's record.
        rid: the run's id; a checkpoint naming another run is never loaded.
        every: write every this many epochs (``train.checkpoint_every``); ``0``: never.
        clock: ``time.perf_counter()`` when this process started the run.

    Attributes:
        resumed_at: the epochs after which the run was resumed, oldest first (empty for a run
            that never stopped).
        earlier_s: seconds the run's earlier processes took up to its checkpoint.
    """

    def __init__(self, results_dir: str | Path, rid: str, every: int, clock: float):
        self.path = checkpoint_path(results_dir, rid)
        self.rid = rid
        self.every = every
        self.clock = clock
        self.kept: dict[str, Any] | None = None
        self.written_epoch = 0
        self.resumed_at: list[int] = []
        self.earlier_s = 0.0

    def load(self) -> dict[str, Any] | None:
        """The saved state of this run, or ``None`` (none saved, or checkpoints off).

        A file that cannot be loaded, or whose run id or layout is not this run's, is set aside
        with a warning and reads as none: the run starts over.
        """
        if not self.every or not self.path.exists():
            return None
        try:
            state = decode(self.path.read_bytes())
            problem = self._problem(state)
        except Exception as error:  # noqa: BLE001 - whatever a damaged file raises
            problem = f"not readable ({type(error).__name__}: {error})"
        if problem is None:
            self.written_epoch = state["epoch"]
            self.resumed_at = [*state["resumed_at"], state["epoch"]]
            self.earlier_s = state["elapsed_s"]
            return state
        try:
            aside = set_aside(self.path)
        except FileNotFoundError:  # another process set it aside first
            return None
        log.warning("%s: %s; set aside as %s, the run starts over", self.path, problem, aside.name)
        return None

    def _problem(self, state: Any) -> str | None:
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            return f"not a checkpoint of layout {FORMAT}"
        if state.get("run_id") != self.rid:
            return f"the checkpoint of run {state.get('run_id')}, not of {self.rid}"
        missing = [key for key, kind in STATE_PARTS.items() if not isinstance(state.get(key), kind)]
        if missing:
            return f"a checkpoint without its {', '.join(missing)}"
        return None

    def keep(self, epoch: int, state: Callable[[], dict[str, Any]]) -> None:
        """Keep the state at the end of ``epoch`` in memory, and write it when it is due.

        Args:
            epoch: the epoch just finished.
            state: returns the run's state now, as copies that training on leaves unchanged
                (`model_state`, `state_dict`).
        """
        if not self.every:
            return
        self.kept = {
            "format": FORMAT,
            "run_id": self.rid,
            "epoch": epoch,
            "resumed_at": self.resumed_at,
            "elapsed_s": self.earlier_s + time.perf_counter() - self.clock,
            **state(),
        }
        if epoch % self.every == 0:
            self.write()

    def write(self) -> None:
        """Write the state kept last, unless it is on disk already (or none is kept)."""
        if self.kept is None or self.kept["epoch"] == self.written_epoch:
            return
        data = encode(self.kept)
        with replacing(self.path, len(data)) as temporary:
            temporary.write_bytes(data)
        self.written_epoch = self.kept["epoch"]

    def remove(self) -> None:
        """Remove the file (the run's record is final, or it starts over)."""
        self.path.unlink(missing_ok=True)
        self.kept, self.written_epoch = None, 0
