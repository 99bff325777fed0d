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
    # the commands' own modules set up what their command needs as they are imported: Hydra's
    # application registers its resolvers and plugins so that a launcher's worker that imports
    # its task function has them
    if not name.endswith("__main__") and name != "lipnorm_exp.cli.app":
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
#: to 1.3.x in pyproject.toml; tests/cli/test_cli_errors.py checks each refusal it rewrites)
PRIVATE_HYDRA_USERS = ["hydra_refusals.py"]


def test_no_module_imports_a_private_hydra_api():
    package = Path(__file__).resolve().parents[2] / "lipnorm_exp"
    users = [path.name for path in package.rglob("*.py") if "hydra._internal" in path.read_text()]
    assert sorted(users) == PRIVATE_HYDRA_USERS


#: the package's layers, lowest first: a module imports only from its own layer and those below
#: (in functions too); a new top-level module or package must be placed here. The project's Hydra
#: plugins (``hydra_plugins/``: the sweeper and the SLURM launcher) sweep, beside ``sweeps``.
LAYERS = (
    # foundations: the layers' library, and helpers that know nothing of runs
    {"lipnorm_exp", "util", "nn"},
    {"models", "data"},
    {"config"},
    {"records"},
    {"sweeps", "hydra_plugins"},
    # training: one orchestrator (training.launch), its members and the two epoch engines
    {"training"},
    {"report"},
    {"cli"},
    {"__main__"},
)  # fmt: skip
PACKAGE = Path(__file__).resolve().parents[2] / "lipnorm_exp"
#: the project's part of the ``hydra_plugins`` namespace package (Hydra's and others' aside)
PLUGINS = ("hydra_plugins.lipnorm_exp_",)
#: every source file of the package and of the project's Hydra plugins
SOURCES = sorted(
    [*PACKAGE.rglob("*.py"), *(PACKAGE.parent / "hydra_plugins").glob("lipnorm_exp_*/*.py")]
)


def _module(path: Path) -> str:
    """``lipnorm_exp/report/tables.py`` → ``lipnorm_exp.report.tables`` (a package: its name)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: every module of :data:`SOURCES`
MODULES = frozenset(_module(path) for path in SOURCES)


def _part(module: str) -> str:
    """``lipnorm_exp.report.tables`` → ``report``: the top-level part a module belongs to.

    A module of the project's Hydra plugins belongs to ``hydra_plugins``.
    """
    parts = module.split(".")
    if parts[0] == "hydra_plugins":
        return parts[0]
    return parts[1] if len(parts) > 1 else parts[0]


def _ours(name: str) -> bool:
    return name.split(".")[0] == "lipnorm_exp" or name.startswith(PLUGINS)


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes of ``tree`` under ``if TYPE_CHECKING:`` (imported for mypy only)."""
    blocks = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    return {id(inner) for block in blocks for node in block.body for inner in ast.walk(node)}


def _imports(
    source: str, module: str, is_package: bool = False, run_time: bool = False
) -> set[str]:
    """The project's modules that ``module``'s ``source`` imports, anywhere in it.

    ``from package import name`` imports the module ``package.name`` where there is one (of
    :data:`MODULES`), else ``package``. ``run_time``: the imports a run makes only, those for the
    type checker (:func:`_type_only`) left out.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    tree = ast.parse(source)
    skipped = _type_only(tree) if run_time else set()
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            where = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                named = f"{where}.{alias.name}"
                found.add(named if named in MODULES else where)
    return {name for name in found if _ours(name)}


def _import_graph(run_time: bool = False) -> dict[str, set[str]]:
    """Each module of :data:`SOURCES` and the project's modules it imports (as :func:`_imports`)."""
    return {
        _module(path): _imports(
            path.read_text(), _module(path), path.name == "__init__.py", run_time
        )
        for path in SOURCES
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: each a path of imports that comes back to its start."""
    state: dict[str, str] = {}
    path: list[str] = []
    found = []

    def visit(module: str) -> None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                found.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


def test_every_module_imports_only_from_its_layer_and_below():
    layer = {part: k for k, parts in enumerate(LAYERS) for part in parts}
    upward = []
    for module, imported in sorted(_import_graph().items()):
        own = _part(module)
        assert own in layer, f"{module}: place {own} in LAYERS"
        upward += [f"{module} imports {name}" for name in sorted(imported)
                   if layer[_part(name)] > layer[own]]  # fmt: skip
    assert upward == []


def test_no_import_circle_across_the_package_and_its_hydra_plugins():
    assert {"hydra_plugins.lipnorm_exp_sweeper.sweeper", "lipnorm_exp.cli"} <= MODULES
    circles = _circles(_import_graph(run_time=True))
    assert [" -> ".join(circle) for circle in circles] == []


def test_the_layer_check_sees_relative_imports_and_imports_inside_functions():
    source = (
        "from . import loop\nfrom ..report import tables\ndef f():\n"
        "    import lipnorm_exp.cli.errors\n"
    )
    found = _imports(source, "lipnorm_exp.nn.layer")
    assert found == {"lipnorm_exp.nn", "lipnorm_exp.report.tables", "lipnorm_exp.cli.errors"}
    assert _imports("from .member import Member\n", "lipnorm_exp.training.launch") == {
        "lipnorm_exp.training.member"
    }
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lipnorm_exp import cli\n"
    assert _imports(typed, "lipnorm_exp.nn.layer") == {"lipnorm_exp.cli"}
    assert _imports(typed, "lipnorm_exp.nn.layer", run_time=True) == set()
