"""The authors' repository at its pinned commit: checked, imported, and their data loaded.

https://github.com/gdasoulas/LipschitzNorm at `COMMIT`; `checkout_refusal` says in one line why a
folder is not that checkout (with the command that makes one), `their_modules` imports their
``models.deepgat``, ``utils`` and ``parser`` from it (after `authors_shims.install`), and
`planetoid` loads a dataset as their scripts do. torch and PyG are imported only by the last two,
so that a refusal is quick.
"""

import contextlib
import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

COMMIT = "25ddec3c8daf28ec45eddff4ae0420ef239c8426"
REPOSITORY = "https://github.com/gdasoulas/LipschitzNorm"
#: their README's example for the depth setting (the arguments after the script's name)
README_DEPTH_EXAMPLE = "--dataset Cora --hidden_dim 64 --heads 8 --nepoch 1000 --lr 0.005"


def checkout_refusal(checkout: Path) -> str | None:
    """Why ``checkout`` is not their repository at `COMMIT` with no tracked file changed."""
    clone = f"git clone {REPOSITORY} {checkout} && git -C {checkout} checkout {COMMIT}"
    if not (checkout / "models" / "deepgat.py").is_file():
        return f"--checkout={checkout}: not a checkout of {REPOSITORY}; run: {clone}"
    git = ["git", "-C", str(checkout)]
    git_c = " ".join(git)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode or head.stdout.strip() != COMMIT:
        found = head.stdout.strip() or "no git commit"
        return f"--checkout={checkout}: at {found}, not {COMMIT}; run: {git_c} checkout {COMMIT}"
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    ).stdout.splitlines()
    if changed:
        files = " ".join(line[3:] for line in changed)
        return f"--checkout={checkout}: tracked files changed ({files}); run: {git_c} checkout -- ."
    return None


@contextlib.contextmanager
def argv(values: list[str]) -> Iterator[None]:
    """``sys.argv`` set to ``values`` for the block (their parser reads it)."""
    saved = sys.argv
    sys.argv = values
    try:
        yield
    finally:
        sys.argv = saved


def their_modules(checkout: Path) -> tuple[dict[str, str], ModuleType, ModuleType, Any]:
    """Stand-ins installed, then their ``models.deepgat``, ``utils`` and README example options."""
    from authors_shims import install

    used = install()
    sys.path.insert(0, str(checkout))
    deepgat, utils, their_parser = map(
        importlib.import_module, ("models.deepgat", "utils", "parser")
    )

    with argv(["train_deepgat_depth.py", *README_DEPTH_EXAMPLE.split()]):
        options = their_parser.parser()
    return used, deepgat, utils, options


def planetoid(name: str, datadir: Path) -> Any:
    """Their data: ``Planetoid(<datadir>/<name>, <name>)``, raw files copied in where absent."""
    from torch_geometric.datasets import Planetoid

    from lipnorm_exp.config.resolvers import folder_list
    from lipnorm_exp.data.download import ensure_files
    from lipnorm_exp.data.planetoid import raw_file_names

    raw_dirs = [
        Path(folder) / "Planetoid" for folder in folder_list(os.environ.get("LIPNORM_RAW_DIRS", ""))
    ]
    ensure_files(
        name,
        datadir / name,
        f"{name}/raw",
        raw_file_names(name),
        raw_dirs=raw_dirs,
        url=Planetoid.url,
    )
    return Planetoid(str(datadir / name), name, transform=None)
