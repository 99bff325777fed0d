"""The command line: its preflight checks, Hydra's refusals in one line, its trackers."""
