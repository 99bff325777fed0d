"""lipnorm_exp's Hydra sweeper plugin (Hydra finds sweepers in the ``hydra_plugins`` package)."""
