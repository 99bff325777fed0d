"""The custom resolvers the YAML files use."""

import os

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from omegaconf import OmegaConf

from lipnorm_exp.config.help import group_help, preset_help
from lipnorm_exp.util.errors import ConfigError


def swept_values(override: Override) -> list:
    """The values one override takes, typed as Hydra parses them: those it sweeps, or its one."""
    return list(override.sweep_iterator()) if override.is_sweep_override() else [override.value()]


def seed_groups(seeds: int | str, per_job: int) -> int | str:
    """A preset's seed axis with ``per_job`` seeds trained together in each job.

    ``seeds`` is the axis as the preset's grid writes it (``range(10)``, ``0,1,2``, ``3``);
    with ``per_job=1`` it comes back as it is, one run per job. Else the seeds are cut, in
    order, into lists of ``per_job`` (the last may be shorter), swept as Hydra sweeps lists:
    ``range(5)`` with 2 per job gives ``[0,1],[2,3],[4]``.
    """
    if not isinstance(per_job, int) or isinstance(per_job, bool) or per_job < 1:
        raise ConfigError(f"seeds_per_job must be an integer >= 1, got {per_job}")
    if per_job == 1:
        return seeds
    (axis,) = OverridesParser.create().parse_overrides([f"seed={seeds}"])
    values = swept_values(axis)
    groups = [values[start : start + per_job] for start in range(0, len(values), per_job)]
    return ",".join("[" + ",".join(str(seed) for seed in group) + "]" for group in groups)


def folder_list(folders: str) -> list[str]:
    """The folders of a list written as ``PATH`` is (``os.pathsep`` between them); ``""``: none."""
    return [folder for folder in folders.split(os.pathsep) if folder]


def register_resolvers() -> None:
    """Register the custom resolvers of the YAML files (none is registered twice).

    ``${lipnorm_cwd:}`` is the folder the command runs in: data, records and logs go under it
    (``configs/paths/default.yaml``), never into the installed package. ``${lipnorm_add:a,b}`` is
    ``a + b``, ``${lipnorm_folders:text}`` is `folder_list` (``paths.raw_dirs``, from
    ``$LIPNORM_RAW_DIRS``), ``${lipnorm_seed_groups:seeds,n}`` is `seed_groups`,
    ``${lipnorm_presets:}`` and ``${lipnorm_groups:}`` list the presets and the config groups
    for ``--help`` (``hydra.help`` in ``configs/hydra/default.yaml``).
    """
    if not OmegaConf.has_resolver("lipnorm_cwd"):
        OmegaConf.register_new_resolver("lipnorm_cwd", os.getcwd)
    if not OmegaConf.has_resolver("lipnorm_add"):
        OmegaConf.register_new_resolver("lipnorm_add", lambda a, b: int(a) + int(b))
    if not OmegaConf.has_resolver("lipnorm_folders"):
        OmegaConf.register_new_resolver("lipnorm_folders", folder_list)
    if not OmegaConf.has_resolver("lipnorm_seed_groups"):
        OmegaConf.register_new_resolver("lipnorm_seed_groups", seed_groups)
    if not OmegaConf.has_resolver("lipnorm_presets"):
        OmegaConf.register_new_resolver("lipnorm_presets", preset_help)
    if not OmegaConf.has_resolver("lipnorm_groups"):
        OmegaConf.register_new_resolver("lipnorm_groups", group_help)
