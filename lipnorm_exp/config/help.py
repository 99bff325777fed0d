"""What ``--help`` lists: the presets and the config groups.

The presets come one line each, from their YAML file's opening comment.
A preset's file (``configs/experiment/<name>.yaml``) opens with a comment whose first sentence
says what it reproduces (``Table 1 (paper §7.1): node classification with missing
vectors.``); the help shows that sentence beside the preset's name.
"""

import re
from pathlib import Path

from lipnorm_exp.config.location import config_dir, preset_names, preset_path

__all__ = ["BASE_SUFFIX", "group_help", "preset_help", "preset_summary"]

#: folders of ``configs/`` that hold the keys several options of a group share (``model_base``,
#: read through the options' defaults lists), not options to choose
BASE_SUFFIX = "_base"

#: the end of a comment's first sentence: a full stop before a capital, or a semicolon before
#: a lower-case word (``Fig. 6`` and ``(Cora, PubMed; 0%)`` do not end one)
_SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z])|;\s+(?=[a-z])")


def preset_summary(path: Path) -> str:
    """The first sentence of the comment that opens the preset file ``path``.

    The comment runs from its first line after ``# @package`` to the first line that is not a
    comment or is an indented example (``#   python -m ...``).
    """
    words = []
    for line in path.read_text().splitlines():
        if line.startswith("# @package"):
            continue
        if not line.startswith("# ") or line.startswith("#  "):
            break
        words.append(line[2:].strip())
    return _SENTENCE_END.split(" ".join(words), maxsplit=1)[0]


def preset_help() -> str:
    """One line per preset: ``  <name>  <summary>``, names aligned, in name order."""
    names = preset_names()
    width = max(len(name) for name in names)
    return "\n".join(f"  {name:<{width}}  {preset_summary(preset_path(name))}" for name in names)


def group_help() -> str:
    """One line per config group: ``<group>: <option>, ...``, as Hydra lists them.

    Hydra's own group and the folders of shared keys (`BASE_SUFFIX`) are left out.
    """
    folders = sorted(path for path in config_dir().iterdir() if path.is_dir())
    lines = []
    for folder in folders:
        if folder.name == "hydra" or folder.name.endswith(BASE_SUFFIX):
            continue
        options = sorted(path.stem for path in folder.glob("*.yaml"))
        if options:
            lines.append(f"{folder.name}: {', '.join(options)}")
    return "\n".join(lines)
