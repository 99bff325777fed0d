"""The project's Hydra plugins, found wherever a config is composed: `register_plugins`.

Hydra finds plugins by listing the modules of the ``hydra_plugins`` namespace package
(``pkgutil.walk_packages``). From an editable install (``pip install -e``) the project's part of
that package is importable but not listed, unless the command runs in the checkout (whose folder
is then on ``sys.path``): ``hydra/sweeper=lipnorm`` would be an unknown option and
``hydra/launcher=submitit_slurm`` an unknown plugin class. Importing the plugins stores their
config nodes, and Hydra's public ``Plugins.register`` adds their classes to those it found.

The plugins sweep with `lipnorm_exp.sweeps` (its expansion, plan and tally), so they are
registered from here, below what runs a sweep (the command line, the report's presets).
"""

from hydra.core.plugins import Plugins

__all__ = ["register_plugins"]


def register_plugins() -> None:
    """Store the project's plugins' config nodes and register their classes with Hydra."""
    from hydra_plugins.lipnorm_exp_launcher.slurm_launcher import SlurmLauncher
    from hydra_plugins.lipnorm_exp_sweeper.sweeper import LipnormSweeper

    for plugin in (LipnormSweeper, SlurmLauncher):
        Plugins.instance().register(plugin)
