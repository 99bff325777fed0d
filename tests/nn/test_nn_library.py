"""``lipnorm_exp.nn`` stands alone: importing it loads no part of the experiment application
(configs, data, training, reports) and none of their libraries, and its errors are plain
``ValueError``s (see test_layers_vs_pyg.py and test_multihead_attention.py)."""

import json
import subprocess
import sys

#: libraries of the application, not of the layers
APP_LIBRARIES = ("hydra", "omegaconf", "ogb", "wandb", "pandas", "matplotlib")

PROBE = """
import json, sys
import torch_geometric  # the layers' own dependency, loaded first: what it imports is not ours
before = set(sys.modules)
import lipnorm_exp.nn
print(json.dumps({"new": sorted(set(sys.modules) - before), "all": sorted(sys.modules)}))
"""


def roots(names):
    return {name.split(".")[0] for name in names}


def test_importing_the_layers_loads_nothing_of_the_application():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    modules = json.loads(out)
    assert not roots(modules["new"]) & set(APP_LIBRARIES), modules["new"]
    # PyG itself loads pandas; the others are loaded by nothing at all
    assert not roots(modules["all"]) & (set(APP_LIBRARIES) - {"pandas"})
    ours = [name for name in modules["all"] if name.split(".")[0] == "lipnorm_exp"]
    # the names of the layers' variants, which the config checks without torch, live apart
    shared = {"lipnorm_exp", "lipnorm_exp.util", "lipnorm_exp.util.variants"}
    assert all(name in shared or name.startswith("lipnorm_exp.nn") for name in ours), ours
