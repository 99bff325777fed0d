"""``python -m lipnorm_exp`` that sends itself a signal at a chosen point of its work.

    python tests/training/kill_points.py <point> <SIGNAL> [overrides...]
    python tests/training/kill_points.py <point> <SIGNAL> verify [lipnorm-exp-verify's arguments...]

Points where a file is being written first write half of it, as a process killed in the middle
of the write would leave it:

- ``raw_copy``: the first raw file copied in from a mirror;
- ``processed_data``: PyG's processed ``data.pt``;
- ``pre_transform``: PyG's ``pre_transform.pt``, written after ``data.pt``;
- ``record_write``: the run record;
- ``record_write_whole``: the run record, the signal sent just before it is written whole;
- ``epoch_<n>``: the start of training epoch ``n`` of a run, or of seeds trained together
  (nothing half-written);
- ``retrain``: ``lipnorm-exp-verify`` about to train a record's run again;
- ``findings_write``: ``lipnorm-exp-verify``'s findings CSV;
- ``findings_written``: ``lipnorm-exp-verify`` just after its findings are written.
"""

import os
import runpy
import shutil
import signal
import sys
from pathlib import Path

import pandas as pd
import torch_geometric.io.fs as pyg_fs

import lipnorm_exp.cli.verify as verify
import lipnorm_exp.cli.verify_runs as verify_runs
import lipnorm_exp.records.store as store
import lipnorm_exp.training.alone as alone
import lipnorm_exp.training.together as together

point, name, *overrides = sys.argv[1:]
number = signal.Signals[name]


def send() -> None:
    os.kill(os.getpid(), number)


def write_half(path: str | Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data[: len(data) // 2])
        handle.flush()
        os.fsync(handle.fileno())


def copy_half(source, target, **kwargs):
    write_half(target, Path(source).read_bytes())
    send()


real_torch_save = pyg_fs.torch_save


def torch_save_half(data, path):
    if Path(path).name.startswith(f".{point_file}") or Path(path).name == point_file:
        real_torch_save(data, path)
        write_half(path, Path(path).read_bytes())
        send()
    return real_torch_save(data, path)


class HalfWriter:
    """A record's file handle that writes the first half of what it is given, then is killed."""

    def __init__(self, handle):
        self.handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()

    def write(self, data):
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        send()


def fdopen_half(real):
    def opened(*args, **kwargs):
        return HalfWriter(real(*args, **kwargs))

    return opened


def signalling_before(real):
    def signal_then_call(*args, **kwargs):
        send()
        return real(*args, **kwargs)

    return signal_then_call


def signalling_after(real):
    def call_then_signal(*args, **kwargs):
        result = real(*args, **kwargs)
        send()
        return result

    return call_then_signal


real_to_csv = pd.DataFrame.to_csv


def to_csv_half(frame, path, **kwargs):
    real_to_csv(frame, path, **kwargs)
    write_half(path, Path(path).read_bytes())
    send()


epochs = []


def signalling_at_epoch(real):
    def train_then_signal(*args, **kwargs):
        epochs.append(1)
        if len(epochs) == int(point.removeprefix("epoch_")):
            send()
        return real(*args, **kwargs)

    return train_then_signal


point_file = {"processed_data": "data.pt", "pre_transform": "pre_transform.pt"}.get(point)
if point == "raw_copy":
    shutil.copy2 = copy_half
elif point_file is not None:
    pyg_fs.torch_save = torch_save_half
elif point == "record_write":
    store.os.fdopen = fdopen_half(store.os.fdopen)
elif point == "record_write_whole":
    store.strict_json = signalling_before(store.strict_json)
elif point.startswith("epoch_"):
    alone.train_epoch = signalling_at_epoch(alone.train_epoch)
    together.Together._train_step = signalling_at_epoch(together.Together._train_step)
elif point == "retrain":
    verify_runs.retrain = signalling_before(verify_runs.retrain)
elif point == "findings_write":
    pd.DataFrame.to_csv = to_csv_half
elif point == "findings_written":
    verify_runs.write_findings = signalling_after(verify_runs.write_findings)
else:
    raise SystemExit(f"unknown point {point}")

if overrides[:1] == ["verify"]:
    sys.exit(verify.main(overrides[1:]))
sys.argv = ["lipnorm_exp", *overrides]
runpy.run_module("lipnorm_exp", run_name="__main__", alter_sys=True)
