"""The config: its resolvers, its schema and the check of a composed config before a run.

- :mod:`~lipnorm_exp.config.location`: where the YAML files are (package or checkout), and
  the presets (``experiment/*.yaml``).
- :mod:`~lipnorm_exp.config.resolvers`: ``${lipnorm_cwd:}`` and ``${lipnorm_add:a,b}``.
- :mod:`~lipnorm_exp.util.constraints`: types and limits of values, checked unconverted.
- :mod:`~lipnorm_exp.config.schema`: the keys of every group option, typed.
- :mod:`~lipnorm_exp.config.rules`: rules between keys.
- :mod:`~lipnorm_exp.config.capacity`: sizes a run can hold (model and history in memory).
- :mod:`~lipnorm_exp.config.launcher`: the launcher's arguments, before a sweep starts.
- :mod:`~lipnorm_exp.config.keys`: every known key, and the closest ones to a typo.
- :mod:`~lipnorm_exp.config.validate`: ``validate(cfg)``, all of the above on one config
  (``check_keys(cfg)``: the keys alone, without the rules between them).
- :mod:`~lipnorm_exp.config.build`: ``build_model(cfg.model, cfg.norm, ...)``, the groups'
  keys as the model's keyword arguments; ``member_configs(cfg)``, one config per seed.

What defines a run, and the hash that names it, are in :mod:`lipnorm_exp.records.identity`.
"""

from lipnorm_exp.config.build import build_model, member_configs
from lipnorm_exp.config.location import config_dir, preset_names, preset_path, search_path
from lipnorm_exp.config.resolvers import register_resolvers
from lipnorm_exp.config.validate import check_keys, validate

__all__ = [
    "build_model",
    "check_keys",
    "config_dir",
    "member_configs",
    "preset_names",
    "preset_path",
    "register_resolvers",
    "search_path",
    "validate",
]
