"""lipnorm_exp's Hydra launcher plugins (Hydra finds launchers in the ``hydra_plugins`` package)."""
