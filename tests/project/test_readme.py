"""README.md's Python examples run as printed, each on its own, in an empty folder, and its
results section quotes the report's tables and the scorecard's counts as they are."""

import re
import subprocess
import sys

import pytest
from cli_helpers import environment
from conftest import REPO

README = (REPO / "README.md").read_text()
#: the report's tables of the published protocol, which the README's results section quotes
TABLES = REPO / "results" / "paper" / "published" / "tables"
#: every fenced Python block of the README, in order
BLOCKS = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)


def test_the_readme_has_its_python_examples():
    assert len(BLOCKS) >= 2
    assert all("import" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{k + 1}" for k in range(len(BLOCKS))])
def test_a_python_block_of_the_readme_runs_on_its_own(block, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def markdown_rows(text: str) -> list[list[str]]:
    """The rows of the first Markdown table in ``text`` (header first, separator left out)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return [row for row in rows if not set(row[0]) <= {"-", ":"}]


def readme_table(opening: str) -> list[list[str]]:
    """The table of the README's results paragraph that begins with ``opening``."""
    return markdown_rows(README[README.index(opening) :])


@pytest.mark.parametrize(
    ("opening", "report", "columns"),
    [
        ("**Table 1**, test accuracy", "table1_missing_vector.md", "{}"),
        ("**Table 3**, test accuracy", "table3_residual.md", "Cora {}"),
    ],
)
def test_the_readmes_result_tables_are_the_reports(opening, report, columns):
    """Each of our cells in the README is the report's (its number, std and depth)."""
    header, *rows = readme_table(opening)
    made_header, *made_rows = markdown_rows((TABLES / report).read_text())
    made = {row[0]: dict(zip(made_header, row, strict=True)) for row in made_rows}
    checked = 0
    for row in rows:
        for column, cell in zip(header[1:], row[1:], strict=True):
            if column.endswith("paper"):  # Table 3's columns of the paper's numbers
                continue
            ours = cell.split(" [")[0]  # Table 1 writes the paper's mean in brackets
            assert made[row[0]][columns.format(column)].split(" n=")[0] == ours.split(" n=")[0]
            checked += 1
    assert checked >= 8


def test_the_readme_gives_the_scorecards_counts():
    counts = re.search(r"\*\*(\d+ lines: [^*]+)\.\*\*", (REPO / "results/SCORECARD.md").read_text())
    assert f"Now: {counts.group(1)} (" in README
