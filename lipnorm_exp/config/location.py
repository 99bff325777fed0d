"""Where the YAML configs are: inside the installed package, or the checkout's ``configs/``.

The repository keeps them in ``configs/`` at its top level; a wheel ships that folder as the
package ``lipnorm_exp.configs`` (``pyproject.toml`` maps it), which Hydra finds through its
``pkg://`` search path wherever the command runs. A source checkout (the package folder beside
``pyproject.toml`` and ``configs/``: an editable install, or the tree on ``PYTHONPATH``) uses
its own folder, so edits there take effect at once.

The presets are the files of ``experiment/``: a preset's name is its file's, and nothing else
lists them (``--help``, ``make reproduce``, the report and the tests read them here).
"""

from importlib.resources import files
from pathlib import Path

__all__ = [
    "CONFIG_PACKAGE",
    "config_dir",
    "option_names",
    "preset_names",
    "preset_path",
    "search_path",
]

#: the package a wheel ships the configs as
CONFIG_PACKAGE = "lipnorm_exp.configs"

_CHECKOUT = Path(__file__).resolve().parents[2]


def _checkout_configs() -> Path | None:
    """``configs/`` of the source checkout the package runs from, if it runs from one."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "configs").is_dir():
        return _CHECKOUT / "configs"
    return None


def search_path() -> str:
    """Hydra's ``config_path`` of the app: the checkout's folder or ``pkg://lipnorm_exp.configs``."""
    checkout = _checkout_configs()
    return str(checkout) if checkout else f"pkg://{CONFIG_PACKAGE}"


def config_dir() -> Path:
    """The configs as a folder on disk (the report reads the presets' files from it)."""
    return _checkout_configs() or Path(str(files(CONFIG_PACKAGE)))


def preset_path(name: str) -> Path:
    """The YAML file of the preset ``name``: ``experiment/<name>.yaml`` of `config_dir`."""
    return config_dir() / "experiment" / f"{name}.yaml"


def option_names(group: str) -> tuple[str, ...]:
    """The options of config group ``group``, by name, sorted.

    Every ``<group>/<name>.yaml`` of `config_dir`.
    """
    return tuple(sorted(path.stem for path in (config_dir() / group).glob("*.yaml")))


def preset_names() -> tuple[str, ...]:
    """The presets: every ``experiment/<name>.yaml`` of `config_dir`, by name, sorted."""
    return option_names("experiment")
