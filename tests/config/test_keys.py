"""The schema's keys: a typo's closest keys, and which options of a group read a key."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from lipnorm_exp.config.keys import closest_keys, known_keys, options_with_key

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_a_typo_is_matched_to_the_keys_some_composition_accepts():
    assert closest_keys("train.lrr") == ["train.lr"]
    assert closest_keys("model.depht")[0] == "model.depth"
    assert closest_keys("nothing.alike") == []
    assert "model.beta" in known_keys()  # a key of model=gt only


@pytest.mark.parametrize(
    ("key", "group"),
    [
        ("dataset.feature_layout", "dataset"),
        ("model.message_path", "model"),
        ("model.beta", "model"),
    ],
)
def test_the_options_said_to_read_a_key_are_those_whose_composed_config_has_it(key, group):
    found = options_with_key(key)
    assert found is not None and found[0] == group
    options = sorted(path.stem for path in (CONFIGS / group).glob("*.yaml"))
    composed = {}
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        for option in options:
            cfg = compose("config", overrides=[f"{group}={option}", "~local"])
            composed[option] = OmegaConf.select(cfg, key) is not None
    assert sorted(found[1]) == sorted(option for option, has in composed.items() if has)
    assert set(found[1]) < set(options)


@pytest.mark.parametrize("key", ["model.depth", "train.lr", "seed", "model", "nothing.here"])
def test_a_key_every_option_reads_or_none_reads_names_no_options(key):
    assert options_with_key(key) is None
