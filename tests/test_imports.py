"""Importing the package changes nothing process-wide: no socket timeout, no torch safe globals,
no signal handlers, no OmegaConf resolvers, no stand-in modules (the CLI's entry point aside,
which registers its resolvers)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import importlib, json, pkgutil, signal, socket, sys
import torch
import torch_geometric  # registers its own safe globals on import
from omegaconf import OmegaConf

def state():
    return {
        "timeout": socket.getdefaulttimeout(),
        # torch and PyG add their own on import; the package used to add PyG's data classes
        "safe_globals": sorted(repr(g) for g in torch.serialization.get_safe_globals()
                               if "torch_geometric.data" in repr(g)),
        "signals": {n: repr(signal.getsignal(n)) for n in (signal.SIGINT, signal.SIGTERM)},
        "resolvers": sorted(name for name in ("lipnorm_cwd", "lipnorm_add")
                            if OmegaConf.has_resolver(name)),
        "blocked": sorted(name for name, module in sys.modules.items() if module is None),
    }

before = state()
import lipnorm_exp
names = [m.name for m in pkgutil.walk_packages(lipnorm_exp.__path__, "lipnorm_exp.")]
for name in names:
    if not name.endswith("__main__"):
        importlib.import_module(name)
print(json.dumps({"before": before, "after": state(), "count": len(names)}))
"""


def test_importing_every_module_changes_no_process_wide_state():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["count"] > 40
    assert result["after"] == result["before"]


#: the one module allowed Hydra's private API: Hydra prints its own refusals of a command line
#: in ``hydra._internal.utils.run_and_report`` and offers no public hook (hydra-core is pinned
#: to 1.3.x in pyproject.toml; tests/test_cli_errors.py checks each refusal it rewrites)
PRIVATE_HYDRA_USERS = ["hydra_refusals.py"]


def test_no_module_imports_a_private_hydra_api():
    package = Path(__file__).resolve().parents[1] / "lipnorm_exp"
    users = [path.name for path in package.rglob("*.py") if "hydra._internal" in path.read_text()]
    assert sorted(users) == PRIVATE_HYDRA_USERS


#: the package's layers, lowest first: a module imports only from its own layer and those below
#: (in functions too); a new top-level module or package must be placed here
LAYERS = (
    # foundations: the layers' library, and helpers that know nothing of runs
    {"lipnorm_exp", "util", "nn"},
    {"models", "data"},
    {"config"},
    {"records"},
    {"sweeps"},
    # training: one orchestrator (training.launch), its members and the two epoch engines
    {"training"},
    {"report"},
    {"cli"},
    {"__main__"},
)  # fmt: skip
PACKAGE = Path(__file__).resolve().parents[1] / "lipnorm_exp"


def _module(path: Path) -> str:
    """``lipnorm_exp/report/tables.py`` → ``lipnorm_exp.report.tables`` (a package: its name)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    """``lipnorm_exp.report.tables`` → ``report``: the top-level part a module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports(source: str, module: str, is_package: bool = False) -> set[str]:
    """The ``lipnorm_exp`` modules that ``module``'s ``source`` imports, anywhere in it."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            found.add(".".join([*base, *([node.module] if node.module else [])]))
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
    return {name for name in found if name.split(".")[0] == "lipnorm_exp"}


def test_every_module_imports_only_from_its_layer_and_below():
    layer = {part: k for k, parts in enumerate(LAYERS) for part in parts}
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        own = _part(module)
        assert own in layer, f"{path}: place {own} in LAYERS"
        imported = _imports(path.read_text(), module, path.name == "__init__.py")
        upward += [f"{module} imports {name}" for name in sorted(imported)
                   if layer[_part(name)] > layer[own]]  # fmt: skip
    assert upward == []


def test_the_layer_check_sees_relative_imports_and_imports_inside_functions():
    source = (
        "from . import loop\nfrom ..report import tables\ndef f():\n"
        "    import lipnorm_exp.cli.errors\n"
    )
    found = _imports(source, "lipnorm_exp.nn.layer")
    assert found == {"lipnorm_exp.nn", "lipnorm_exp.report", "lipnorm_exp.cli.errors"}
    assert _imports("from .member import Member\n", "lipnorm_exp.training.launch") == {
        "lipnorm_exp.training.member"
    }
