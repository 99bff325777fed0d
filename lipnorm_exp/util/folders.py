"""The folders a run writes to, made and found writable before anything runs."""

from pathlib import Path

from lipnorm_exp.util.atomic import temp_path
from lipnorm_exp.util.errors import ConfigError

__all__ = ["writable_folder"]


def writable_folder(path: str | Path, key: str) -> Path:
    """Make folder ``path`` where it is missing and check that a file can be written in it.

    Args:
        path: the folder.
        key: the config key that names it (``paths.results_dir``), for the message.

    Raises:
        ConfigError: the folder cannot be made or written to; one line naming the key.
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = temp_path(folder / "write-probe")
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(f"{key}={path} is not a writable folder ({reason})") from None
    return folder
