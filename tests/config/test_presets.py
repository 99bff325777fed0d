"""Experiment presets: each composes at both scales, as a multirun whose jobs all validate.

Composition only (Hydra's compose API): no job runs and no data is read, so presets on
PubMed and OGB are checked here too.
"""

from math import prod
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict

from lipnorm_exp.config import check_keys, member_configs, preset_names, validate
from lipnorm_exp.records import run_id
from lipnorm_exp.sweeps.plan import check_given_keys, job_configs, planned_runs
from lipnorm_exp.sweeps.progress import grid_jobs, grid_runs, grid_size, sweep_axes
from lipnorm_exp.util.errors import ConfigError

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
PRESETS = preset_names()
SCALES = ("quick", "paper")
#: config groups: a swept key naming one selects a YAML file, the others set a value
GROUPS = {path.name for path in CONFIGS.iterdir() if path.is_dir()}
#: the supplementary's search: lr × hidden × heads × dropout
SEARCH_FACTOR = 4 * 5 * 4 * 2


@pytest.fixture(scope="module", autouse=True)
def hydra_configs():
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        yield


def compose_sweep(*overrides: str) -> DictConfig:
    """The primary config of ``python -m lipnorm_exp <overrides>``, Hydra's keys included."""
    return compose("config", overrides=list(overrides), return_hydra_config=True)


def compose_job(job: list[str]) -> DictConfig:
    """The config one job of a sweep runs with (its overrides are the whole command line)."""
    return compose("config", overrides=job)


def as_dict(job: list[str]) -> dict[str, str]:
    return dict(override.split("=", 1) for override in job)


def sample_jobs(jobs: list[list[str]]) -> list[list[str]]:
    """A few jobs of a grid that use every option of every swept group (``+method``, ``model``,
    ``dataset``, ...) and the first and last value of every other swept key.

    Job ``i`` takes the ``i``-th option of each group (cyclically) and the first value of the
    other keys when ``i`` is even, the last when odd; the grid is a product, so each such job
    is one of its jobs. The first and last jobs are added.
    """
    values: dict[str, list[str]] = {}
    for job in jobs:
        for key, value in as_dict(job).items():
            values.setdefault(key, [])
            if value not in values[key]:
                values[key].append(value)
    groups = {key for key in values if key.lstrip("+") in GROUPS}
    count = max([2, *(len(values[key]) for key in groups)])
    by_values = {tuple(sorted(as_dict(job).items())): job for job in jobs}
    wanted = [
        {
            key: options[i % len(options)] if key in groups else options[-(i % 2)]
            for key, options in values.items()
        }
        for i in range(count)
    ]
    picked = [by_values[tuple(sorted(assignment.items()))] for assignment in wanted]
    return [jobs[0], *(job for job in picked if job not in (jobs[0], jobs[-1])), jobs[-1]]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("preset", PRESETS)
def test_preset_is_a_multirun_whose_jobs_validate(preset, scale):
    cfg = compose_sweep(f"+experiment={preset}", f"scale={scale}")
    assert cfg.hydra.mode == RunMode.MULTIRUN
    assert preset in cfg.tags
    jobs = grid_jobs(cfg.hydra)
    assert len(jobs) == grid_size(cfg.hydra) > 1
    assert len({tuple(job) for job in jobs}) == len(jobs)
    sample = sample_jobs(jobs)
    ids = set()
    for job in sample:
        job_cfg = compose_job(job)
        validate(job_cfg)
        assert job_cfg.scale == scale
        assert job_cfg.train.epochs == cfg.grid[scale].epochs
        ids.add(run_id(job_cfg))
    assert len(ids) == len(sample), "two jobs of the grid would share one record"


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("preset", PRESETS)
def test_the_sweep_config_of_a_preset_passes_the_key_checks(preset, scale):
    """What the sweep checks before its first job (its swept keys hold their defaults)."""
    cfg = compose_sweep(f"+experiment={preset}", f"scale={scale}")
    with open_dict(cfg):
        del cfg["hydra"]
    check_keys(cfg)


@pytest.mark.parametrize(
    "preset, scale, expected",
    [
        ("missing_vector", "quick", 1 * 2 * 5 * 3 * 1),
        ("missing_vector", "paper", 3 * 2 * 5 * 20 * 5),
        ("residual", "quick", 1 * 4 * 1 * 2),
        ("residual", "paper", 2 * 4 * 2 * 5),
        ("depth", "paper", 4 * 2 * 4 * 7 * 5),
        ("trees", "paper", 9 * 9 * 10),
        ("ablation", "paper", 1 * 1 * 9 * 4 * 3 * 3),
    ],
)
def test_grid_size_of_presets(preset, scale, expected):
    cfg = compose_sweep(f"+experiment={preset}", f"scale={scale}")
    assert grid_size(cfg.hydra) == expected


@pytest.mark.parametrize("preset, scale", [("missing_vector", "quick"), ("residual", "paper")])
def test_supplementary_search_multiplies_the_grid(preset, scale):
    base = compose_sweep(f"+experiment={preset}", f"scale={scale}")
    searched = compose_sweep(f"+experiment={preset}", f"scale={scale}", "+search=supplementary")
    assert grid_size(searched.hydra) == grid_size(base.hydra) * SEARCH_FACTOR
    jobs = grid_jobs(searched.hydra)
    for job in (jobs[0], jobs[-1]):
        job_cfg = compose_job(job)
        validate(job_cfg)
        chosen = as_dict(job)
        assert job_cfg.train.lr == float(chosen["train.lr"])
        assert job_cfg.model.hidden == int(chosen["model.hidden"])
        assert job_cfg.model.heads == int(chosen["++model.heads"])


def test_a_search_over_heads_is_refused_for_a_model_without_attention(tmp_path):
    """The search sweeps ``++model.heads``, which GCN does not read: its runs would repeat."""
    results = f"paths.results_dir={tmp_path}"
    cfg = compose_sweep("+experiment=missing_vector", "+search=supplementary", results)
    with pytest.raises(ConfigError) as refused:
        check_given_keys(cfg)
    assert str(refused.value).startswith(
        "++model.heads=1: model.name=gcn does not read model.heads, so its runs would be "
        "recorded (or repeated) as if it did; allowed: leave model.heads out, or a model that "
        "reads it (gat, gatv2, gt)"
    )
    attention = compose_sweep(
        "+experiment=missing_vector",
        "+search=supplementary",
        "grid.quick.methods='gat,gat_lip'",
        results,
    )
    check_given_keys(attention)
    assert len(planned_runs(attention)) == grid_runs(attention.hydra)


def test_command_line_narrows_a_preset_grid():
    cfg = compose_sweep(
        "+experiment=residual",
        "grid.quick.methods='gat,gat_lip_res'",
        "grid.quick.seeds=0",
        "grid.quick.depths=2",
    )
    jobs = grid_jobs(cfg.hydra)
    assert [as_dict(job)["+method"] for job in jobs] == ["gat", "gat_lip_res"]
    configs = [compose_job(job) for job in jobs]
    assert [(c.model.name, c.norm.name, c.model.residual) for c in configs] == [
        ("gat", "none", False),
        ("gat", "lip", True),
    ]
    assert all(c.model.depth == 2 and c.seed == 0 for c in configs)


@pytest.mark.parametrize("scale", SCALES)
def test_trees_models_have_tree_depth_plus_one_layers(scale):
    cfg = compose_sweep("+experiment=trees", f"scale={scale}")
    for job in sample_jobs(grid_jobs(cfg.hydra)):
        job_cfg = compose_job(job)
        assert job_cfg.dataset.name == "trees"
        assert job_cfg.model.depth == job_cfg.dataset.depth + 1
        assert job_cfg.model.hidden == 32
        assert job_cfg.protocol.name == "alon_yahav"
        assert job_cfg.model.post_layernorm == (job_cfg.model.name != "ggnn")


def test_sweep_axes_are_the_values_of_each_swept_key():
    cfg = compose_sweep("+experiment=missing_vector", "scale=paper")
    axes = sweep_axes(cfg.hydra)
    assert axes["dataset"] == ["cora", "citeseer", "pubmed"]
    assert axes["dataset.missing_rate"] == [0.0, 1.0]
    assert axes["+method"] == ["gcn", "ggnn", "gat", "gat_pn", "gat_lip"]
    assert axes["model.depth"] == list(range(1, 21)) and axes["protocol"] == ["published"]
    assert grid_size(cfg.hydra) == prod(len(values) for values in axes.values())


def test_sample_jobs_covers_every_option():
    cfg = compose_sweep("+experiment=depth")
    jobs = grid_jobs(cfg.hydra)
    sample = [as_dict(job) for job in sample_jobs(jobs)]
    assert {job["model"] for job in sample} == {"gat", "gt"}
    assert {job["norm"] for job in sample} == {"none", "layernorm", "pairnorm", "lip"}
    assert {job["model.depth"] for job in sample} == {"2", "10"}
    assert len(sample) < len(jobs) == prod((1, 2, 4, 2, 1))


@pytest.mark.parametrize(("dataset", "rate"), [("cora", 1.0), ("pubmed", 1.0), ("ogbn_arxiv", 0.0)])
def test_gcnii_preset_uses_table2_missing_rate_per_dataset(dataset, rate):
    job = compose_job(["+experiment=gcnii", "scale=paper", f"dataset={dataset}"])
    assert job.dataset.missing_rate == rate


PAPER_PRESETS = ("gradients", "residual", "missing_vector", "depth", "pubmed_depth", "gcnii")


def protocols(*overrides: str) -> set[str]:
    return {as_dict(job)["protocol"] for job in grid_jobs(compose_sweep(*overrides).hydra)}


@pytest.mark.parametrize("preset", PAPER_PRESETS)
def test_paper_presets_use_the_published_protocol_at_paper_scale(preset):
    assert protocols(f"+experiment={preset}", "scale=paper") == {"published"}
    assert protocols(f"+experiment={preset}", "scale=quick") == {"standard"}
    told = protocols(f"+experiment={preset}", "scale=paper", "protocol=standard")
    assert told == {"standard"}


def test_search_varies_the_width_per_head_under_the_published_protocol():
    cfg = compose_sweep("+experiment=residual", "scale=paper", "+search=supplementary")
    first_of_each_width = {}
    for job in grid_jobs(cfg.hydra):
        first_of_each_width.setdefault(as_dict(job)["model.hidden"], job)
    assert len(first_of_each_width) == 5
    for hidden, job in first_of_each_width.items():
        job_cfg = compose_job(job)
        assert job_cfg.protocol.name == "published"
        assert job_cfg.model.head_channels == job_cfg.model.input_width == int(hidden)


def test_ablation_changes_one_factor_of_the_protocol():
    published = ["+experiment=ablation", "protocol=published", "+method=gat_lip"]
    base = compose_job([*published, "+ablation=none"])
    for name in ("row_normalised", "head_channels_16", "no_attn_dropout", "plateau", "last_elu"):
        changed = compose_job([*published, f"+ablation={name}"])
        validate(changed)
        assert changed.ablation.name == name
        before, after = (OmegaConf.to_container(c, resolve=False) for c in (base, changed))
        differing = [
            f"{section}.{key}"
            for section in ("dataset", "model", "train")
            for key in before[section]
            if before[section][key] != after[section][key]
        ]
        assert len(differing) == 1, (name, differing)


@pytest.mark.parametrize("preset", PRESETS)
def test_seeds_per_job_groups_every_presets_seeds(preset):
    """The same runs, in jobs of up to 3 seeds trained together; each job validates."""
    plain = compose_sweep(f"+experiment={preset}", "scale=paper")
    grouped = compose_sweep(f"+experiment={preset}", "scale=paper", "seeds_per_job=3")
    seeds = sweep_axes(plain.hydra)["seed"]
    jobs = grid_jobs(grouped.hydra)
    assert grid_runs(grouped.hydra) == grid_size(plain.hydra)
    assert len(jobs) == grid_size(plain.hydra) // len(seeds) * -(-len(seeds) // 3)
    job_cfg = compose_job(jobs[0])
    validate(job_cfg)
    assert list(job_cfg.seed) == seeds[:3]


def test_the_sweep_plan_composes_the_runs_its_jobs_run():
    # TREES' model.depth interpolates its swept dataset.depth; two seeds per job, then one
    cfg = compose_sweep(
        "+experiment=trees",
        "grid.quick.tree_depths='2,3'",
        "grid.quick.methods='gat,gcn'",
        "grid.quick.seeds='0,1,2'",
        "seeds_per_job=2",
    )
    planned = [run_id(member) for job in job_configs(cfg) for member in member_configs(job)]
    composed = []
    for job in grid_jobs(cfg.hydra):
        overrides = as_dict(job)
        for seed in overrides.pop("seed").strip("[]").split(","):
            alone = [*(f"{key}={value}" for key, value in overrides.items()), f"seed={seed}"]
            composed.append(run_id(compose_job(alone)))
    assert sorted(planned) == sorted(composed)
    assert len(set(planned)) == grid_runs(cfg.hydra) == 2 * 2 * 3


@pytest.mark.parametrize("preset", PRESETS)
def test_grid_jobs_are_hydras_own_expansion_of_the_sweep(preset):
    # the command line sets a key the preset sweeps (it replaces the axis in place) and another
    cfg = compose_sweep(f"+experiment={preset}", "model.depth=3", "train.lr=0.01")
    params = [f"{key}={value}" for key, value in cfg.hydra.sweeper.params.items()]
    overrides = OverridesParser.create().parse_overrides([*params, *cfg.hydra.overrides.task])
    [expected] = BasicSweeper.split_arguments(overrides, max_batch_size=None)
    assert grid_jobs(cfg.hydra) == expected
