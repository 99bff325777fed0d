"""Errors that reach the user as one line."""


class UserError(Exception):
    """Something the user can fix; its message, one line, names the key, file or folder."""


class ConfigError(UserError, ValueError):
    """A configuration value that cannot run; the message names the key and the allowed values."""


class DataNotFoundError(UserError, FileNotFoundError):
    """Raw data files that are absent and cannot be downloaded; the message names the folder."""


class DataError(UserError, OSError):
    """Data files on disk that cannot be read or prepared; the message names the file."""
