"""Errors that reach the user as one line."""


class UserError(Exception):
    """Something the user can fix; its message, one line, names the key, file or folder."""


class ConfigError(UserError, ValueError):
    """A configuration value that cannot run; the message names the key and the allowed values."""


class DataNotFoundError(UserError, FileNotFoundError):
    """Raw data files that are absent and cannot be downloaded; the message names the folder."""


class DataError(UserError, OSError):
    """Data files on disk that cannot be read or prepared; the message names the file."""


class MissingPackageError(UserError, ImportError):
    """A Python package that a code path needs is not installed (or cannot be imported)."""

    @classmethod
    def of(cls, error: ImportError, needed_by: str) -> "MissingPackageError":
        """The error for ``error``, raised by ``needed_by``, with the install that fixes it.

        Args:
            error: what the import raised; its ``name`` is the module that failed.
            needed_by: what needed it (``reading data/Planetoid/Cora/raw/ind.cora.x``).
        """
        package = (error.name or "").split(".")[0] or "?"
        if isinstance(error, ModuleNotFoundError):
            return cls(f"{needed_by} needs the Python package {package}: pip install {package}")
        return cls(
            f"{needed_by} needs the Python package {package}, which cannot be imported "
            f"({error}): pip install --upgrade {package}"
        )
