"""Foundations that know nothing of runs: errors, files, locks, processes, devices, limits."""
