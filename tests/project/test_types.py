"""The package type-checks: mypy, as ``[tool.mypy]`` in pyproject.toml sets it up, finds no error
in any of its modules; the typed run record makes mypy refuse a misspelt record, summary or
epoch-row key, subscripted or read by ``.get`` (``scripts/mypy_typeddict_keys.py``); and the
report's declared row and scorecard line make it refuse a misspelt column or field."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PYPROJECT

#: run by ``make typecheck``, a CI step of its own, not by ``make test``
pytestmark = pytest.mark.typecheck
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (it comes with the dev extra: pip install -e '.[dev]')",
)
def test_package_type_checks():
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked = re.search(r"^Success: no issues found in (\d+) source files$", done.stdout, re.M)
    assert checked, done.stdout + done.stderr
    # the configuration names the whole package: every module is checked
    assert int(checked.group(1)) == len(list((ROOT / "lipnorm_exp").rglob("*.py")))


#: a reader and a writer of the typed record, every key spelt right
TYPED_USE = """
from lipnorm_exp.records.schema import RUN_ID, VAL_ACC, EpochRow, Record


def best(record: Record) -> float | None:
    return record["summary"]["best_val_acc"] if record[RUN_ID] else None


def last(record: Record) -> float:
    return record["history"][-1][VAL_ACC]


def timed(row: EpochRow, seconds: float) -> None:
    row["time_s"] = seconds


def error(record: Record) -> str | None:
    return record.get("error")
"""
#: a misspelt key of each kind: what :data:`TYPED_USE` spells right, and the misspelt key
TYPOS = {
    "record": ('record["summary"]', "sumary"),
    "summary": ('["best_val_acc"]', "best_val_accuracy"),
    "epoch row": ("[VAL_ACC]", "val_ac"),
    "epoch row written": ('row["time_s"]', "time"),
    "record read by get": ('record.get("error")', "eror"),
}


def _mypy(source: str, folder: Path, monkeypatch) -> tuple[str, int]:
    """mypy's report and exit status on ``source``, which imports this checkout's package.

    Only the package's modules are followed (the libraries it imports are taken as untyped), so
    a check takes seconds.
    """
    mypy_api = pytest.importorskip("mypy.api", reason="mypy comes with the dev extra")
    module = folder / "typed_use.py"
    module.write_text(source)
    config = folder / "mypy.ini"
    plugins = PYPROJECT["tool"]["mypy"]["plugins"]
    config.write_text(
        "[mypy]\nfollow_imports = skip\nignore_missing_imports = True\n"
        f"plugins = {','.join(str(ROOT / plugin) for plugin in plugins)}\n"
        "[mypy-lipnorm_exp.*]\nfollow_imports = silent\n"
    )
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    report, errors, status = mypy_api.run(
        [str(module), "--config-file", str(config), "--cache-dir", str(folder / "cache")]
    )
    return report + errors, status


def test_the_typed_record_spelt_right_type_checks(tmp_path, monkeypatch):
    report, status = _mypy(TYPED_USE, tmp_path, monkeypatch)
    assert status == 0, report


@pytest.mark.parametrize("where", list(TYPOS))
def test_a_misspelt_record_summary_or_epoch_row_key_fails_the_type_check(
    where, tmp_path, monkeypatch
):
    right, typo = TYPOS[where]
    wrong = re.sub(r'"\w+"|VAL_ACC', f'"{typo}"', right)
    report, status = _mypy(TYPED_USE.replace(right, wrong), tmp_path, monkeypatch)
    assert status == 1 and f'has no key "{typo}"' in report, report


#: a reader of the report's frame and run row and of a scorecard line, every name spelt right
REPORT_USE = """
import pandas as pd

from lipnorm_exp.report.run_row import DEPTH, RunRow
from lipnorm_exp.report.verdicts import ScoreLine


def deepest(runs: pd.DataFrame) -> int:
    return int(runs[DEPTH].max())


def depth(row: RunRow) -> int:
    return row[DEPTH]


def rule(line: ScoreLine) -> str:
    return line.rule


def paper_mean(line: ScoreLine) -> float | None:
    return None if line.numbers is None else line.numbers.paper_mean
"""
#: a misspelling of each kind: what :data:`REPORT_USE` spells right, its misspelling, and mypy's
#: refusal of it
REPORT_TYPOS = {
    "frame column": ("runs[DEPTH]", "runs[DEPHT]", 'Name "DEPHT" is not defined'),
    "run row column": ("row[DEPTH]", 'row["depht"]', 'TypedDict "RunRow" has no key "depht"'),
    "scorecard line": ("line.rule", "line.rules", '"ScoreLine" has no attribute "rules"'),
    "line numbers": (
        "numbers.paper_mean",
        "numbers.paper_men",
        '"LineNumbers" has no attribute "paper_men"',
    ),
}


@pytest.mark.parametrize("where", list(REPORT_TYPOS))
def test_a_misspelt_report_column_or_scorecard_field_fails_the_type_check_where_spelt(
    where, tmp_path, monkeypatch
):
    right, typo, refusal = REPORT_TYPOS[where]
    planted = REPORT_USE.replace(right, typo)
    line = planted[: planted.index(typo)].count("\n") + 1
    report, status = _mypy(planted, tmp_path, monkeypatch)
    assert status == 1 and f"typed_use.py:{line}: error: {refusal}" in report, report


def test_the_report_spelt_right_type_checks(tmp_path, monkeypatch):
    report, status = _mypy(REPORT_USE, tmp_path, monkeypatch)
    assert status == 0, report
