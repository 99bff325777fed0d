"""The config: its resolvers, its schema and the check of a composed config before a run.

- `location`: where the YAML files are (package or checkout), and
  the presets (``experiment/*.yaml``).
- `resolvers`: ``${lipnorm_cwd:}`` and ``${lipnorm_add:a,b}``.
- `constraints`: types and limits of values, checked unconverted.
- `schema`: the keys of every group option, typed.
- `rules`: rules between keys.
- `capacity`: sizes a run can hold (model and history in memory).
- `launcher`: the launcher's arguments, before a sweep starts.
- `keys`: every known key, and the closest ones to a typo.
- `validate`: ``validate(cfg)``, all of the above on one config
  (``check_keys(cfg)``: the keys alone, without the rules between them).
- `build`: ``build_model(cfg.model, cfg.norm, ...)``, the groups'
  keys as the model's keyword arguments; ``member_configs(cfg)``, one config per seed.

What defines a run, and the hash that names it, are in
[`lipnorm_exp.records.identity`][lipnorm_exp.records.identity].
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
