"""A preset's grid as Hydra composes it: what a table or figure of that preset spans.

The report re-lists no grid. `preset_grid` composes ``config`` with
``+experiment=<preset> scale=<scale> protocol=<protocol>`` from the package's ``configs/`` (as
``python -m lipnorm_exp`` does) and reads what its sweep varies (``hydra.sweeper.params``,
which name ``grid.<scale>``). Each choice of the swept config groups (``dataset``, ``+method``,
``model``, ``norm``, ...) is composed as one job, which gives its dataset, missing-vector rate,
model label and hyper-parameters; the other swept keys (``model.depth``,
``dataset.missing_rate``, ``dataset.depth``, ...) keep their lists of values. The seed and the
protocol are left free: a preset's runs may have more seeds than its grid names, and the
report shows each protocol on its own. `paper_budget` reads a preset's budget at
``scale=paper`` (``grid.paper``: its epochs and seeds) the same way.
"""

import math
import multiprocessing
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import product
from pathlib import Path
from typing import Any

import pandas as pd
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.config import config_dir, register_resolvers
from lipnorm_exp.records.labels import model_label
from lipnorm_exp.report.frame import config_value
from lipnorm_exp.report.run_row import CONFIG, DATASET, LABEL, MISSING_RATE
from lipnorm_exp.sweeps.plugins import register_plugins
from lipnorm_exp.sweeps.progress import sweep_axes
from lipnorm_exp.util.processes import usable_cores

#: the package's configs (``configs/experiment/<preset>.yaml``, ``configs/search/*.yaml``, ...)
CONFIGS_DIR = config_dir()
#: swept keys a preset's runs are not held to (module docstring)
FREE_KEYS = ("seed", "protocol")
#: keys no search config sweeps that a run may still set apart from its preset (a model's own
#: setup, the input features): compared and named beside the searched keys
SET_BY_HAND = ("dataset.normalize_features", "model.activation", "train.conv_weight_decay")


def search_keys(configs_dir: Path) -> tuple[str, ...]:
    """The config keys a hyper-parameter search (``configs/search/*.yaml``) sweeps, sorted."""
    keys: set[str] = set()
    for path in (configs_dir / "search").glob("*.yaml"):
        params = OmegaConf.select(OmegaConf.load(path), "hydra.sweeper.params") or {}
        keys.update(key.lstrip("+") for key in params)
    return tuple(sorted(keys))


def hyper_keys(searched: tuple[str, ...]) -> tuple[str, ...]:
    """The keys runs are compared on: those a search sweeps and `SET_BY_HAND`, sorted."""
    return tuple(sorted({*searched, *SET_BY_HAND}))


@cache
def compose_config(
    configs_dir: Path, overrides: tuple[str, ...], with_hydra: bool = False
) -> DictConfig:
    """The config ``python -m lipnorm_exp <overrides>`` composes (Hydra's keys too if asked)."""
    register_resolvers()
    register_plugins()
    with initialize_config_dir(str(configs_dir), version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=with_hydra)


def _among(value: Any, allowed: tuple) -> bool:
    """Whether ``value`` is one of ``allowed`` (numbers compared with a tolerance)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return any(
            isinstance(option, (int, float)) and math.isclose(value, option) for option in allowed
        )
    return value in allowed


@dataclass(frozen=True)
class GridJob:
    """One choice of a preset's swept config groups, composed.

    Args:
        dataset (str): ``dataset.name``.
        missing_rate (float): ``dataset.missing_rate`` (0 where the dataset has none).
        label (str): the model label (`model_label`).
        norm (str): ``norm.name``.
        hyper_parameters (tuple): the values of `PresetGrid.hyper_keys`, in their order.
    """

    dataset: str
    missing_rate: float
    label: str
    norm: str
    hyper_parameters: tuple


@dataclass(frozen=True)
class PresetGrid:
    """A preset's grid at one scale and protocol (module docstring).

    Args:
        preset (str): the preset's name (its tag).
        scale (str): ``quick`` or ``paper``.
        protocol (str): the protocol composed.
        jobs (tuple[GridJob, ...]): one per choice of the swept config groups, in sweep order.
        values (Mapping[str, tuple]): the other swept keys, not free, and their values.
        search_keys (tuple[str, ...]): the keys a search config sweeps (`search_keys`).
    """

    preset: str
    scale: str
    protocol: str
    jobs: tuple[GridJob, ...]
    values: Mapping[str, tuple]
    search_keys: tuple[str, ...]

    @cached_property
    def hyper_keys(self) -> tuple[str, ...]:
        """The keys of `GridJob.hyper_parameters` (`hyper_keys`)."""
        return hyper_keys(self.search_keys)

    @property
    def datasets(self) -> tuple[str, ...]:
        """The datasets, in sweep order."""
        return tuple(dict.fromkeys(job.dataset for job in self.jobs))

    @property
    def labels(self) -> tuple[str, ...]:
        """The model labels, in sweep order."""
        return tuple(dict.fromkeys(job.label for job in self.jobs))

    def missing_rates(self, dataset: str) -> tuple[float, ...]:
        """The missing-vector rates of ``dataset``: swept ones, else those its jobs compose to."""
        swept = self.values.get("dataset.missing_rate")
        if swept is not None:
            return tuple(float(rate) for rate in swept)
        return tuple(dict.fromkeys(job.missing_rate for job in self.jobs if job.dataset == dataset))

    def holds(self, run: Mapping[str, Any]) -> bool:
        """Whether the grid holds ``run`` (a row of the report's frame, with its ``config``).

        Its dataset and model label are those of a job, its missing rate one of its dataset's,
        and every other swept key one of its values.
        """
        if (run[DATASET], run[LABEL]) not in {(job.dataset, job.label) for job in self.jobs}:
            return False
        if not _among(run[MISSING_RATE], self.missing_rates(run[DATASET])):
            return False
        return all(
            _among(config_value(run[CONFIG], key), allowed) for key, allowed in self.values.items()
        )

    def contains(self, runs: pd.DataFrame) -> pd.Series:
        """Which of ``runs`` the grid holds (`holds`)."""
        held = [self.holds(run) for _, run in runs.iterrows()]
        return pd.Series(held, index=runs.index, dtype=bool)

    def hyper_parameters(self, run: Mapping[str, Any]) -> tuple:
        """``run``'s values of `hyper_keys`, in their order (a `GridJob`'s too)."""
        return tuple(config_value(run[CONFIG], key) for key in self.hyper_keys)

    def sets(self, run: Mapping[str, Any]) -> bool:
        """Whether ``run`` has the hyper-parameters of a job of its label: the preset's own."""
        values = self.hyper_parameters(run)
        return any(job.hyper_parameters == values for job in self.jobs if job.label == run[LABEL])

    def off_defaults(self, runs: pd.DataFrame) -> tuple[str, ...]:
        """The `hyper_keys` at which some run has a value no job of its label has, sorted.

        Empty when every run has the preset's own hyper-parameters: no search ran on them.
        """
        off = set()
        for _, run in runs.iterrows():
            jobs = [job for job in self.jobs if job.label == run[LABEL]]
            for i, value in enumerate(self.hyper_parameters(run)):
                if all(value != job.hyper_parameters[i] for job in jobs):
                    off.add(self.hyper_keys[i])
        return tuple(sorted(off))


def _grid_job(job: DictConfig, keys: tuple[str, ...]) -> GridJob:
    sections = {name: OmegaConf.to_container(job[name], resolve=True) for name in ("model", "norm")}
    return GridJob(
        dataset=job.dataset.name,
        missing_rate=float(job.dataset.get("missing_rate", 0.0)),
        label=model_label(sections),
        norm=job.norm.name,
        hyper_parameters=tuple(OmegaConf.select(job, key) for key in keys),
    )


def _composed_grid(preset: str, scale: str, protocol: str, configs_dir: Path) -> PresetGrid:
    base = (f"+experiment={preset}", f"scale={scale}", f"protocol={protocol}")
    axes = sweep_axes(compose_config(configs_dir, base, with_hydra=True).hydra)
    groups = {path.name for path in configs_dir.iterdir() if path.is_dir()}
    swept = {key: values for key, values in axes.items() if key not in FREE_KEYS}
    chosen = {key: values for key, values in swept.items() if key.lstrip("+") in groups}
    searched = search_keys(configs_dir)
    keys = hyper_keys(searched)
    jobs = []
    for combo in product(*chosen.values()):
        overrides = (*base, *(f"{key}={value}" for key, value in zip(chosen, combo, strict=True)))
        jobs.append(_grid_job(compose_config(configs_dir, overrides), keys))
    values = {key.lstrip("+"): tuple(vals) for key, vals in swept.items() if key not in chosen}
    return PresetGrid(preset, scale, protocol, tuple(jobs), values, searched)


def _paper_sweep(preset: str) -> DictConfig:
    """``preset`` composed at ``scale=paper``, Hydra's keys included."""
    return compose_config(CONFIGS_DIR, (f"+experiment={preset}", "scale=paper"), True)


@cache
def paper_protocol(preset: str) -> str:
    """The protocol ``preset``'s paper-scale sweep runs under: its grid's, else its config's."""
    composed = _paper_sweep(preset)
    swept = sweep_axes(composed.hydra).get("protocol")
    return str(swept[0]) if swept else composed.protocol.name


@dataclass(frozen=True)
class Budget:
    """What a preset's paper-scale grid gives each of its settings: the paper's budget.

    Args:
        epochs (int): ``grid.paper.epochs``, each run's epochs at most.
        seeds (int): how many seeds ``grid.paper.seeds`` sweeps.
    """

    epochs: int
    seeds: int


def paper_budget(preset: str) -> Budget:
    """The budget of ``preset``'s paper-scale grid, read from its YAML (`Budget`)."""
    composed = _paper_sweep(preset)
    return Budget(int(composed.grid.paper.epochs), len(sweep_axes(composed.hydra)["seed"]))


#: the grids composed in this process (or handed to it by `compose_grids`), by preset, scale,
#: protocol and configs folder
_GRIDS: dict[tuple[str, str, str, Path], PresetGrid] = {}


def preset_grid(preset: str, scale: str, protocol: str) -> PresetGrid:
    """Compose the grid of ``preset`` at ``scale`` under ``protocol`` from `CONFIGS_DIR`.

    Composed once per process and configs folder (module docstring).
    """
    key = (preset, scale, protocol, CONFIGS_DIR)
    if key not in _GRIDS:
        _GRIDS[key] = _composed_grid(*key)
    return _GRIDS[key]


def _forked_grid(key: tuple[str, str, str, Path]) -> PresetGrid:
    return _composed_grid(*key)


def compose_grids(wanted: Iterable[tuple[str, str, str]]) -> None:
    """Compose the grids ``wanted`` (``(preset, scale, protocol)``) that `preset_grid` has not.

    Hydra composes one config at a time, a seventh of a second each, and a report's grids take
    some two hundred; so they are composed in forked processes (where the system forks), one
    per core this process may use, each grid in one, and `preset_grid` returns them after. A
    grid is the same whichever process composes it.
    """
    keys = [(*key, CONFIGS_DIR) for key in dict.fromkeys(wanted)]
    missing = [key for key in keys if key not in _GRIDS]
    if len(missing) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        _GRIDS.update((key, _composed_grid(*key)) for key in missing)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(min(usable_cores(), len(missing)), mp_context=context) as pool:
        _GRIDS.update(zip(missing, pool.map(_forked_grid, missing), strict=True))


__all__ = [
    "CONFIGS_DIR",
    "SET_BY_HAND",
    "Budget",
    "GridJob",
    "PresetGrid",
    "compose_config",
    "compose_grids",
    "hyper_keys",
    "paper_budget",
    "paper_protocol",
    "preset_grid",
    "search_keys",
]
