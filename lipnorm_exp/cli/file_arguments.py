"""The file and folder arguments of the package's commands, checked before anything runs.

A path to be written is checked by writing nothing that stays (a probe file, removed); a CSV
file to be read must be UTF-8, comma-separated and hold the columns its reader takes. Each
refusal is one `UserError` naming the argument, the path and
what would do.
"""

import argparse
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from lipnorm_exp.util.atomic import temp_path
from lipnorm_exp.util.commands import folder_path
from lipnorm_exp.util.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["file_path", "output_folder", "read_table", "writable_path"]


def file_path(text: str) -> Path:
    """An argument that names a file: a non-empty path that does not end in a separator.

    Raises:
        argparse.ArgumentTypeError: ``text`` is blank or names a folder by its form.
    """
    if not text.strip() or text.endswith(("/", "\\")):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a file path (a non-empty path not ending in a separator)"
        )
    return Path(text)


def _existing_ancestor(path: Path) -> Path:
    """The nearest of ``path``'s parents that exists (``path`` itself where it does)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def writable_path(path: Path, argument: str, folder: bool) -> None:
    """Check that a file (or, ``folder``, a folder) can be written at ``path``; write nothing.

    Raises:
        UserError: ``path`` is a folder where a file is meant (or the other way), lies under a
            file, or its folder cannot be written (read-only, ``/proc``, no permission).
    """
    kind, other = ("folder", "file") if folder else ("file", "folder")
    if path.exists() and path.is_dir() != folder:
        raise UserError(f"{argument} {path} is a {other}; give a {kind} path")
    where = _existing_ancestor(path if folder else path.parent)
    if not where.is_dir():
        raise UserError(f"{argument} {path} lies under the file {where}; give a {kind} path")
    probe = temp_path(where / "write-probe")
    try:
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UserError(f"{argument} {path}: {where} cannot be written ({reason})") from None


def output_folder(text: str) -> Path:
    """An argument that names a folder to write in: one there, or one that can be made, writable.

    Raises:
        argparse.ArgumentTypeError: ``text`` is empty, a file, lies under a file, or cannot be
            written (`writable_path`'s reason).
    """
    path = folder_path(text)
    try:
        writable_path(path, "folder", folder=True)
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return path


def read_table(path: Path, argument: str, columns: Collection[str], what: str) -> "pd.DataFrame":
    """The comma-separated UTF-8 table at ``path``, holding ``columns`` (run ids as text).

    ``what`` names the file the argument takes (``a table's .runs.csv``), for the fix.

    Raises:
        UserError: ``path`` is not a file, is empty, not UTF-8 text or not CSV, or lacks one of
            ``columns``.
    """
    import pandas as pd  # once a table is read: a command's --help needs none

    if not path.is_file():
        raise UserError(f"{argument} {path} is not a file; give {what}")
    try:
        frame = pd.read_csv(path, dtype={"run_id": str}, encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise UserError(f"{argument} {path} is empty; give {what}") from None
    except (UnicodeDecodeError, pd.errors.ParserError):
        raise UserError(f"{argument} {path} is not UTF-8 CSV text; give {what}") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UserError(f"{argument} {path} cannot be read ({reason}); give {what}") from None
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise UserError(
            f"{argument} {path} has no column {', '.join(missing)} (a comma-separated file "
            f"with columns {', '.join(columns)}); give {what}"
        )
    return frame
