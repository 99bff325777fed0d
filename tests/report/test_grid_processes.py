"""The report's grids composed in processes at once: the same grids, and those the report takes."""

import pandas as pd
import pytest

from lipnorm_exp.report import aggregate, grids

#: three small grids (a few jobs each), at two scales and two protocols
KEYS = [
    ("gradients", "quick", "standard"),
    ("gcnii", "quick", "standard"),
    ("residual", "paper", "authors"),
]


@pytest.fixture
def no_grids(monkeypatch):
    """No grid composed yet in this process, and no config cached."""
    monkeypatch.setattr(grids, "_GRIDS", {})
    grids.compose_config.cache_clear()
    yield
    grids.compose_config.cache_clear()


@pytest.mark.slow
def test_grids_composed_in_other_processes_are_those_composed_here(no_grids):
    grids.compose_grids([*KEYS, KEYS[0]])
    assert grids.compose_config.cache_info().currsize == 0  # composed elsewhere
    forked = dict(grids._GRIDS)
    keys = [(*key, grids.CONFIGS_DIR) for key in KEYS]  # the cache is per configs folder too
    assert list(forked) == keys
    here = {key: grids._composed_grid(*key) for key in keys}
    assert forked == here
    composed_here = grids.compose_config.cache_info().currsize
    assert composed_here == sum(len(grid.jobs) + 1 for grid in here.values())
    grids.compose_grids(KEYS)  # nothing left to compose
    assert grids.compose_config.cache_info().currsize == composed_here
    assert grids.preset_grid(*KEYS[1]) is forked[keys[1]]


def _frame(rows: list[tuple[str, str, str, list[str]]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["scale", "protocol", "status", "tags"])


def test_the_grids_composed_at_once_are_those_of_the_presets_tagged(monkeypatch):
    asked: list[list[tuple[str, str, str]]] = []
    monkeypatch.setattr(aggregate, "compose_grids", lambda wanted: asked.append(list(wanted)))
    frame = _frame([
        ("paper", "published", "completed", ["depth", "not_a_preset"]),
        ("paper", "published", "diverged", ["gcnii"]),
        ("paper", "published", "failed", ["trees"]),
        ("paper", "standard", "completed", ["missing_vector", "depth"]),
        ("quick", "standard", "completed", []),
        ("quick", "alon_yahav", "completed", ["trees"]),
    ])  # fmt: skip
    aggregate.compose_tagged_grids(frame)
    aggregate.compose_tagged_grids(frame, "paper")
    assert asked == [
        [
            ("depth", "paper", "published"),
            ("gcnii", "paper", "published"),
            ("depth", "paper", "standard"),
            ("missing_vector", "paper", "standard"),
            ("trees", "quick", "alon_yahav"),
        ],
        [
            ("depth", "paper", "published"),
            ("gcnii", "paper", "published"),
            ("depth", "paper", "standard"),
            ("missing_vector", "paper", "standard"),
        ],
    ]
