"""The golden histories of ``tests/records/test_numerics.py``: the runs, and their regeneration.

:data:`GOLDEN` holds, per numerics version, the histories of :data:`RUNS` made by that version on
one CPU thread, and the processor model that made them. Today's code makes today's version's with
the default keys, and version 1's with :data:`VERSION_1_KEYS` (the keys' values before the fast
paths), so both are pinned. ``python tests/records/golden/regenerate.py`` trains :data:`RUNS` and
writes today's version's histories, keeping the older versions' as they were made. Do it only after
bumping :data:`lipnorm_exp.records.numerics.NUMERICS_VERSION` for a change that alters what a run
computes (with a CHANGELOG line saying why).
"""

import json
import sys
import tempfile
from pathlib import Path

import torch

TESTS = Path(__file__).resolve().parents[2]
# run as a script: the tests' shared helpers are in tests/, the Hydra plugins in the checkout
for folder in (TESTS.parent, TESTS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from conftest import compose_config  # noqa: E402

from lipnorm_exp.records import EPOCH_TIME_KEY, NUMERICS_VERSION, schema  # noqa: E402
from lipnorm_exp.records.numerics import VERSION_1  # noqa: E402
from lipnorm_exp.records.provenance import processor_model  # noqa: E402
from lipnorm_exp.training.launch import run  # noqa: E402

#: where the golden histories are kept
GOLDEN = Path(__file__).with_name("histories.json")
#: the file's keys
PROCESSOR_KEY, VERSIONS_KEY = "processor_model", "versions"
#: tiny runs on Cora, each name → its overrides: dropout, attention, normalisation, gradients and
#: Lipschitz estimates all enter the numbers pinned
SMALL = ("model.depth=2", "model.hidden=8", "train.epochs=3", "train.track_gradients=true")
#: TREES at depth 2 (its mini-batches, batching and evaluation), GAT-Lip
TREES = (
    "dataset=trees",
    "dataset.depth=2",
    "dataset.num_trees=24",
    "dataset.batch_size=8",
    "dataset.passes_per_epoch=2",
    "train.epochs=2",
)
RUNS = {
    "gat_lip": (*SMALL, "model=gat", "norm=lip", "model.heads=2", "train.estimate_lipschitz=true"),
    "gcn": (*SMALL, "model=gcn", "norm=none"),
    "gt_lip": (*SMALL, "model=gt", "norm=lip", "model.heads=2"),
    "trees_gat_lip": (*TREES, "model=gat", "norm=lip"),
}
#: the overrides that make a run compute numerics version 1 (the computation keys at their values
#: before the fast paths: :data:`lipnorm_exp.records.identity.COMPUTATION_KEYS`), by run
VERSION_1_KEYS = {
    "gat_lip": ("model.message_path=gather", "dataset.feature_layout=dense"),
    "gcn": ("dataset.feature_layout=dense",),
    "gt_lip": ("model.message_path=gather", "dataset.feature_layout=dense"),
    "trees_gat_lip": ("model.message_path=gather",),
}


def timeless(history: list[dict]) -> list[dict]:
    """``history`` without the epochs' wall-clock times, the one thing two equal runs differ in."""
    return [{key: value for key, value in row.items() if key != EPOCH_TIME_KEY} for row in history]


def histories(folder: Path, version: int = NUMERICS_VERSION) -> dict[str, list[dict]]:
    """The history (:func:`timeless`) of every run of :data:`RUNS` computing ``version``.

    Made under ``folder`` on one CPU thread (the number of threads is restored after); version 1
    with :data:`VERSION_1_KEYS`. Each record must say the version it computed.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        made = {}
        for name, overrides in RUNS.items():
            keys = VERSION_1_KEYS[name] if version == VERSION_1 else ()
            [record] = run(compose_config(folder / str(version), [*overrides, *keys]))
            assert record[schema.STATUS] == schema.COMPLETED, record[schema.ERROR]
            assert record[schema.NUMERICS] == version, (name, record[schema.NUMERICS])
            made[name] = timeless(record[schema.HISTORY])
        return made
    finally:
        torch.set_num_threads(threads)


def golden() -> dict:
    """The golden file as stored."""
    return json.loads(GOLDEN.read_text())


def regenerate() -> None:
    """Train :data:`RUNS` and write today's version's histories into :data:`GOLDEN`.

    Older versions' histories are kept as they are: today's code must still make them.
    """
    stored = golden() if GOLDEN.exists() else {VERSIONS_KEY: {}}
    if stored.get(PROCESSOR_KEY, processor_model()) != processor_model():
        sys.exit(f"{GOLDEN} was made on {stored[PROCESSOR_KEY]!r}: regenerate it on one of those")
    with tempfile.TemporaryDirectory() as folder:
        made = histories(Path(folder))
    versions = {**stored[VERSIONS_KEY], str(NUMERICS_VERSION): made}
    content = {PROCESSOR_KEY: processor_model(), VERSIONS_KEY: versions}
    GOLDEN.write_text(json.dumps(content, indent=1) + "\n")
    print(f"wrote {GOLDEN} (numerics version {NUMERICS_VERSION}, {processor_model()})")


if __name__ == "__main__":
    regenerate()
