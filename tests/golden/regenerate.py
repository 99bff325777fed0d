"""The golden histories of ``tests/test_numerics.py``: the runs, and their regeneration.

``python tests/golden/regenerate.py`` trains :data:`RUNS` on one CPU thread and writes their
histories, the numerics version and this machine's processor model to :data:`GOLDEN`. Do it
only after bumping :data:`lipnorm_exp.records.numerics.NUMERICS_VERSION` for a change that
alters what a run computes (with a CHANGELOG line saying why).
"""

import json
import sys
import tempfile
from pathlib import Path

import torch

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:  # run as a script: the tests' helpers are beside this folder
    sys.path.insert(0, str(TESTS))

from conftest import compose_config  # noqa: E402

from lipnorm_exp.records import EPOCH_TIME_KEY, NUMERICS_VERSION, schema  # noqa: E402
from lipnorm_exp.records.provenance import processor_model  # noqa: E402
from lipnorm_exp.training.launch import run  # noqa: E402

#: where the golden histories are kept
GOLDEN = Path(__file__).with_name("histories.json")
#: the file's keys
VERSION_KEY, PROCESSOR_KEY, RUNS_KEY = "numerics_version", "processor_model", "runs"
#: tiny runs on Cora, each name → its overrides: dropout, attention, normalisation, gradients and
#: Lipschitz estimates all enter the numbers pinned
SMALL = ("model.depth=2", "model.hidden=8", "train.epochs=3", "train.track_gradients=true")
RUNS = {
    "gat_lip": (*SMALL, "model=gat", "norm=lip", "model.heads=2", "train.estimate_lipschitz=true"),
    "gcn": (*SMALL, "model=gcn", "norm=none"),
    "gt_lip": (*SMALL, "model=gt", "norm=lip", "model.heads=2"),
}


def timeless(history: list[dict]) -> list[dict]:
    """``history`` without the epochs' wall-clock times, the one thing two equal runs differ in."""
    return [{key: value for key, value in row.items() if key != EPOCH_TIME_KEY} for row in history]


def histories(folder: Path) -> dict[str, list[dict]]:
    """The history (:func:`timeless`) of every run of :data:`RUNS`, made under ``folder``.

    Trained on one CPU thread; the number of threads is restored after.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        made = {}
        for name, overrides in RUNS.items():
            [record] = run(compose_config(folder, list(overrides)))
            assert record[schema.STATUS] == schema.COMPLETED, record[schema.ERROR]
            made[name] = timeless(record[schema.HISTORY])
        return made
    finally:
        torch.set_num_threads(threads)


def golden() -> dict:
    """The golden file as stored."""
    return json.loads(GOLDEN.read_text())


def regenerate() -> None:
    """Train :data:`RUNS` and write :data:`GOLDEN`."""
    with tempfile.TemporaryDirectory() as folder:
        made = histories(Path(folder))
    content = {VERSION_KEY: NUMERICS_VERSION, PROCESSOR_KEY: processor_model(), RUNS_KEY: made}
    GOLDEN.write_text(json.dumps(content, indent=1) + "\n")
    print(f"wrote {GOLDEN} (numerics version {NUMERICS_VERSION}, {processor_model()})")


if __name__ == "__main__":
    regenerate()
