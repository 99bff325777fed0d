"""What a run is: the config keys that define it, the hash that names it, and its setting.

The one definition of run identity. A run record
([`lipnorm_exp.records.store`][lipnorm_exp.records.store]) is named by
[`run_id`][lipnorm_exp.records.identity.run_id]; the report groups records equal in
[`setting_key`][lipnorm_exp.records.identity.setting_key] (everything that defines a run except its
seed) as the seeds of one hyper-parameter setting. Both read the same
[`defining_config`][lipnorm_exp.records.identity.defining_config], so a run repeated with other
defining values (gradient tracking on, for instance) is another run and another setting in both.
"""

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any, cast

from omegaconf import DictConfig, OmegaConf

#: keys that say where or how a run is shown, not what it computes: left out of its hash
NON_DEFINING_KEYS = (
    "paths",
    "force",
    "rerun_stale",
    "device",
    "logger",
    "tags",
    "grid",
    "seeds_per_job",
    "hydra",
)
#: ``train`` keys likewise (``threads``: as ``device``, where a run computes; its record's
#: ``machine`` names the threads it used)
NON_DEFINING_TRAIN_KEYS = ("progress", "checkpoint_every", "threads")
#: keys that choose how a run computes, not what: the same function with other rounding, as the
#: device (``model.message_path``: how the attention layers sum their messages;
#: ``dataset.feature_layout``: whether the input features are multiplied as a sparse matrix);
#: left out of its hash, and named by the record's numerics version
#: ([`lipnorm_exp.records.numerics.run_numerics`][lipnorm_exp.records.numerics.run_numerics])
COMPUTATION_KEYS = (("model", "message_path"), ("dataset", "feature_layout"))
#: keys added after runs were recorded without them, each with the value under which a run
#: computes what it computed before the key existed (``model.message_path``: ``gather``, the
#: message path of every run before the key; ``dataset.feature_layout``: ``dense``, the input of
#: every run before it; ``protocol.reported_epoch`` and ``protocol.std_ddof``: the reporting rule
#: of every protocol before ``protocol=authors``): at that value a key is left out of the hash,
#: so the records made before it still name the runs that made them
ADDED_KEYS: dict[tuple[str, str], Any] = {
    ("train", "conv_weight_decay"): None,
    ("model", "message_path"): "gather",
    ("dataset", "feature_layout"): "dense",
    ("protocol", "reported_epoch"): "best_val",
    ("protocol", "std_ddof"): 1,
}
#: the key that tells the seeds of one setting apart
SEED_KEY = "seed"
#: the first reporting seed: seeds from it on report a setting chosen on the seeds below it and
#: never choose one (`lipnorm_exp.report.aggregate.select`)
REPORTING_SEEDS_FROM = 100


def defining_config(config: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The resolved config without the keys that do not change what a run computes.

    Args:
        config: a composed config (resolved here) or a record's ``config`` (resolved already).
    """
    if isinstance(config, DictConfig):
        container = cast(dict[str, Any], OmegaConf.to_container(config, resolve=True))
    else:
        container = copy.deepcopy(dict(config))
    for key in NON_DEFINING_KEYS:
        container.pop(key, None)
    for key in NON_DEFINING_TRAIN_KEYS:
        container.get("train", {}).pop(key, None)
    for group, key in COMPUTATION_KEYS:
        container.get(group, {}).pop(key, None)
    for (group, key), before in ADDED_KEYS.items():
        values = container.get(group, {})
        if key in values and values[key] == before:
            del values[key]
    return container


def _canonical(container: Mapping[str, Any]) -> str:
    return json.dumps(container, sort_keys=True, separators=(",", ":"))


def run_id(config: DictConfig | Mapping[str, Any]) -> str:
    """Stable 16-hex-digit hash of `defining_config` (key order does not matter)."""
    return hashlib.sha256(_canonical(defining_config(config)).encode()).hexdigest()[:16]


def setting_key(config: DictConfig | Mapping[str, Any]) -> str:
    """Canonical JSON of `defining_config` without the seed.

    Runs equal in it are the seeds of one hyper-parameter setting.
    """
    container = defining_config(config)
    container.pop(SEED_KEY, None)
    return _canonical(container)


__all__ = [
    "ADDED_KEYS",
    "COMPUTATION_KEYS",
    "NON_DEFINING_KEYS",
    "NON_DEFINING_TRAIN_KEYS",
    "REPORTING_SEEDS_FROM",
    "SEED_KEY",
    "defining_config",
    "run_id",
    "setting_key",
]
