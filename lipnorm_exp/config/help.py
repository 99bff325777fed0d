"""The presets as ``--help`` lists them: one line each, from their YAML file's opening comment.

A preset's file (``configs/experiment/<name>.yaml``) opens with a comment whose first sentence
says what it reproduces (``Table 1 (paper §7.1): node classification with missing
vectors.``); the help shows that sentence beside the preset's name.
"""

import re
from pathlib import Path

from lipnorm_exp.config.location import config_dir

__all__ = ["preset_help", "preset_summary"]

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
    paths = sorted((config_dir() / "experiment").glob("*.yaml"))
    width = max(len(path.stem) for path in paths)
    return "\n".join(f"  {path.stem:<{width}}  {preset_summary(path)}" for path in paths)
