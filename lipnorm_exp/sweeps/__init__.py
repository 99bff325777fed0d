"""Sweeps: the plan said before a sweep starts, and its progress and tally."""
