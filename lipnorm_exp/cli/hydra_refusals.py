"""Hydra's own refusals of a command line, in one line with exit status 2.

Before the task function starts, Hydra parses the overrides, composes the config and sets up
its sweeper; what it refuses there (the override grammar, a key, group or option the config
does not have, a sweep without ``--multirun``) it prints over several lines with exit status
1, suggesting ``+key=value`` for a typo. `HydraRefusals` ends those as the project's own
refusals end: ``lipnorm_exp: error: <override> ...; <what is allowed>`` on one line, exit
status 2, an unknown key with the closest known keys
(`closest_keys`). An error once the task function has started,
and a job's error in a sweep, are left to Hydra; ``HYDRA_FULL_ERROR=1`` keeps Hydra's stack.
The project's own refusal raised there, a sweep the project's sweeper cannot expand
(`grid_jobs`: an interval, a shuffled list), ends in its one
line too. (A launcher argument is refused before Hydra meets it, by
`Preflight`.)

Why Hydra's private API, in this one module: the refusals above happen before any plugin or
callback runs (parsing the command line, composing the config), and Hydra prints them in
``hydra._internal.utils.run_and_report``, for which Hydra 1.3 offers no public hook.
`HydraRefusals.installed` wraps it while the command runs; nothing else of the project
touches ``hydra._internal`` (``tests/project/test_imports.py``).
"""

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import hydra._internal.utils as hydra_utils
import yaml
from hydra.errors import (
    HydraException,
    MissingConfigException,
    OverrideParseException,
)

from lipnorm_exp.cli.errors import ERROR_PREFIX, EXIT_USER_ERROR, JobError, full_error_wanted, say
from lipnorm_exp.config.keys import closest_keys, known_keys, options_with_key
from lipnorm_exp.config.location import config_dir
from lipnorm_exp.util.errors import UserError

__all__ = ["GRAMMAR", "HydraRefusals", "refusal_line"]

#: Hydra's override grammar, where a refused override is explained
GRAMMAR = "https://hydra.cc/docs/advanced/override_grammar/basic"
#: what ValueError Hydra raises for an override without a key (``=3``)
NO_KEY = "Config group override must be"


def _overrides(args: Sequence[str]) -> list[str]:
    return [arg for arg in args if not arg.startswith("-")]


def _given(args: Sequence[str], key: str) -> str:
    """The override of ``args`` that sets ``key`` (``key=value``), or ``key`` alone."""
    for override in _overrides(args):
        if override.lstrip("+~").split("=", 1)[0] == key:
            return override.lstrip("+~")
    return key


def _unknown_key(key: str, args: Sequence[str]) -> str:
    owners = options_with_key(key)
    if owners is not None:  # a key of other options of its group than the chosen one
        group, having = owners
        return (
            f"{_given(args, key)} is not a key of the chosen {group}; only {group}="
            f"{', '.join(having)} read it: choose one of them, or leave the key out"
        )
    if key in known_keys():  # a key of the schema that the composed config leaves out
        return f"{_given(args, key)} is not set by the chosen config; allowed: +{_given(args, key)}"
    close = closest_keys(key)
    hint = f"did you mean {' or '.join(close)}?" if close else "see --cfg job for the keys"
    return f"{_given(args, key)} is not a key of the config; {hint}"


def _missing_option(error: MissingConfigException, args: Sequence[str]) -> str | None:
    found = re.search(r"Could not find '([^']+)/([^'/]+)'", str(error))
    if not found:
        return None
    group, option = found.groups()
    listed = str(error).split(f"Available options in '{group}':", 1)[1:]
    options = re.findall(r"^\t(\S+)$", "".join(listed).split("Config search path")[0], re.M)
    allowed = ", ".join(options) or f"the files of configs/{group}/"
    return f"{group}={option} is not an option of {group}; allowed: {allowed}"


#: the personal config, the one config file a user writes (``configs/config.yaml``'s defaults)
LOCAL_CONFIG = ("local", "default.yaml")


def _local_config(args: Sequence[str]) -> Path:
    """The personal config file of the config folder ``args`` name (``--config-path``)."""
    folder: str | Path = config_dir()
    for index, arg in enumerate(args):
        if arg.startswith("--config-path="):
            folder = arg.split("=", 1)[1]
        elif arg in ("--config-path", "-cp") and index + 1 < len(args):
            folder = args[index + 1]
    return Path(folder).joinpath(*LOCAL_CONFIG)


def _unreadable_config(error: Exception, args: Sequence[str]) -> str | None:
    """The line for a config file that is not YAML (or not UTF-8) text, or ``None``."""
    if isinstance(error, yaml.YAMLError):
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        where = (
            f"{mark.name} line {mark.line + 1}, column {mark.column + 1}" if mark else "a config"
        )
        return (
            f"{where} is not YAML ({problem}); fix it (indent with spaces, close every bracket "
            "and quote) or delete it"
        )
    if isinstance(error, UnicodeDecodeError):
        local = _local_config(args)
        name = str(local) if local.is_file() else "a config file"
        return (
            f"{name} is not UTF-8 text ({error.reason} at byte {error.start}); rewrite or delete it"
        )
    return None


def refusal_line(error: Exception, args: Sequence[str]) -> str | None:
    """The one line for Hydra's refusal ``error`` of the command line ``args``, or ``None``.

    ``None`` where ``error`` is not a refusal of the command line (a job's error, a bug). The
    project's own refusal (`UserError`) is its message.
    """
    if isinstance(error, UserError):
        return str(error)
    if isinstance(error, ValueError) and str(error).startswith(NO_KEY):
        bare = next(o for o in _overrides(args) if not o.lstrip("+~").split("=", 1)[0])
        return f"{bare} names no key; allowed: key=value, e.g. model.depth=3"
    if isinstance(error, OverrideParseException):
        why = str(error.message).strip().splitlines()[0]
        return (
            f"{error.override} is not an override Hydra can read ({why}); allowed: key=value, "
            f"a value with spaces, brackets or non-ASCII characters quoted as key='value' "
            f"({GRAMMAR})"
        )
    if isinstance(error, MissingConfigException):
        return _missing_option(error, args) or _joined(error)
    unreadable = _unreadable_config(error, args)
    if unreadable:
        return unreadable
    if not isinstance(error, HydraException) or isinstance(error, JobError):
        return None
    text = str(error)
    if text.startswith("In 'local/default'"):  # a file Hydra read but cannot merge
        return (
            f"{_local_config(args)} is not a mapping of keys "
            f"({_joined(error).split(': ', 1)[-1]}); write `# @package _global_` then "
            "`key: value` lines, or delete it"
        )
    unknown = re.match(r"Could not override '([^']+)'", text)
    if unknown:
        return _unknown_key(unknown.group(1), args)
    sweep = re.match(r"Sweep parameters '([^']+)' requires --multirun", text)
    if sweep:
        return f"{sweep.group(1)} is a sweep; allowed: one value, or --multirun to sweep"
    return _joined(error)


def _joined(error: Exception) -> str:
    lines = str(error).split("Config search path")[0].split("\n")
    return " ".join(line.strip() for line in lines if line.strip())


class HydraRefusals:
    """Hydra's refusals of ``args`` in one line while `installed` (module docstring)."""

    def __init__(self, args: Sequence[str]):
        self.args = list(args)
        self.started = False

    def start_task(self) -> None:
        """Mark the task function as started: Hydra's errors from now on are not refusals."""
        self.started = True

    def report(self, func: Callable[[], Any]) -> Any:
        """``func()``; a refusal of the command line it raises ends the process in one line."""
        try:
            return func()
        except Exception as error:
            line = None if self.started or full_error_wanted() else refusal_line(error, self.args)
            if line is None:
                raise
            say(f"{ERROR_PREFIX}{line}")
            raise SystemExit(EXIT_USER_ERROR) from None

    @contextmanager
    def installed(self) -> Iterator["HydraRefusals"]:
        """Wrap Hydra's error report for the time of the ``with`` block."""
        original = hydra_utils.run_and_report
        hydra_utils.run_and_report = lambda func: original(lambda: self.report(func))
        try:
            yield self
        finally:
            hydra_utils.run_and_report = original
