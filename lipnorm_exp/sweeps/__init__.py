"""Sweeps: the grid expanded once, the plan said before a sweep starts, its progress and tally.

The project's Hydra plugins (``hydra_plugins/``), which sweep with these, are registered here too
(`plugins`).
"""
