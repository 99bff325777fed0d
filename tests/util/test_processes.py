"""`usable_cores`: the cores a process may run on, its affinity where the system keeps one."""

import os
import subprocess
import sys

import pytest

from lipnorm_exp.util.processes import usable_cores


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_usable_cores_are_the_affinity_not_the_machines_cores():
    assert usable_cores() == len(os.sched_getaffinity(0))
    pinned = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from lipnorm_exp.util.processes import usable_cores; print(usable_cores())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert pinned.stdout.strip() == "1"
