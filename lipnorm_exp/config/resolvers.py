"""The custom resolvers the YAML files use."""

import os

from omegaconf import OmegaConf


def register_resolvers() -> None:
    """``${lipnorm_cwd:}`` and ``${lipnorm_add:a,b}``, used by the YAML files.

    ``${lipnorm_cwd:}`` is the folder the command runs in: data, records and logs go under it
    (``configs/paths/default.yaml``), never into the installed package.
    """
    if not OmegaConf.has_resolver("lipnorm_cwd"):
        OmegaConf.register_new_resolver("lipnorm_cwd", os.getcwd)
    if not OmegaConf.has_resolver("lipnorm_add"):
        OmegaConf.register_new_resolver("lipnorm_add", lambda a, b: int(a) + int(b))
