"""Errors that reach the user as one line."""


class ConfigError(ValueError):
    """A configuration value that cannot run; the message names the key and the allowed values."""


class DataNotFoundError(FileNotFoundError):
    """Raw data files that are absent and cannot be downloaded; the message names the folder."""
