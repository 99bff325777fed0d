"""glibc's allocator keeping freed memory changes no number: a history with it and without it."""

import json
import os
import platform
import subprocess
import sys

import pytest
from conftest import CONFIGS

from lipnorm_exp.util.allocator import keep_freed_memory

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")

#: a short Cora run in a fresh process (mallopt is not undone), printing its history's numbers;
#: ``keep`` False: the run's start does not call mallopt
HISTORY = """
import json, sys
import lipnorm_exp.training.prepare as prepare
from lipnorm_exp.report.grids import compose_config
from lipnorm_exp.training.launch import run
data, results, keep = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if not keep:
    prepare.keep_freed_memory = lambda: False
cfg = compose_config(sys.argv[4], (f"paths.data_dir={data}", f"paths.results_dir={results}",
    "device=cpu", "train.progress=false", "train.epochs=4", "model.depth=4", "~local"))
[record] = run(cfg)
print(json.dumps([{k: v for k, v in row.items() if k != "time_s"} for row in record["history"]]))
"""


def test_glibc_takes_the_setting():
    assert keep_freed_memory()


def test_a_history_is_the_same_bit_for_bit_with_and_without_it(data_dir, tmp_path):
    histories = []
    for keep in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-c", HISTORY, str(data_dir), str(tmp_path / keep), keep, CONFIGS],
            env={**os.environ, "OMP_NUM_THREADS": "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        histories.append(json.loads(done.stdout.splitlines()[-1]))
    assert len(histories[0]) == 4 and histories[0] == histories[1]
