"""Errors that reach the user as one line."""

import errno
from pathlib import Path

#: what a write that finds no room raises (``OSError.errno``): the device is full, or the quota
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class UserError(Exception):
    """Something the user can fix; its message, one line, names the key, file or folder."""


class ConfigError(UserError, ValueError):
    """A configuration value that cannot run; the message names the key and the allowed values."""


class DataNotFoundError(UserError, FileNotFoundError):
    """Raw data files that are absent and cannot be downloaded; the message names the folder."""


class DataError(UserError, OSError):
    """Data files on disk that cannot be read or prepared; the message names the file."""


def _in_words(size: int) -> str:
    """``size`` bytes as a person reads them: ``3 kB``, ``1.2 MB``."""
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{-(-size // 1000)} kB"


class DiskFullError(UserError):
    """A file that could not be written for want of space; the message names its folder."""

    @classmethod
    def of(cls, target: Path, size: int | None = None) -> "DiskFullError":
        """The error of writing ``target`` (``size`` bytes, where known) on a full device."""
        needed = "" if size is None else f" ({_in_words(size)} needed)"
        return cls(
            f"no space left on the device of {target.parent} to write {target.name}{needed}; "
            "free space there and run the command again"
        )


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
