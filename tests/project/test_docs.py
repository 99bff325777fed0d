"""The documentation site (``mkdocs.yml``, ``docs/``): it builds with every warning an error, and
every code block of its pages runs as docs/contributing.md ("Documentation") says.

A page's blocks run in order in one empty folder (the folder a reader works in: its records,
reports and data stay there for the page's later blocks), with Cora prepared beforehand."""

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_helpers import environment
from conftest import REPO

from lipnorm_exp.records import NUMERICS_VERSION, SCHEMA_VERSION
from lipnorm_exp.records.store import record_problem

DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
#: a fenced block, and the marker comment on the line just above it where there is one
BLOCK = re.compile(r"(?:^<!-- (run-with|no-run): (.*?) -->\n)?^```(\w*)\n(.*?)^```", re.M | re.S)
#: the commands a ``run-with`` marker appends its arguments to
EXTENDED = re.compile(r"^(python -m lipnorm_exp|lipnorm-exp|python examples/\S+)(\s|$)")
#: the most blocks the pages may keep from running, each with its reason
MOST_NOT_RUN = 3


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page, with its marker (``run-with``, ``no-run`` or none)."""

    page: str
    marker: str | None
    argument: str
    language: str
    code: str


def page_blocks(page: Path) -> list[Block]:
    name = str(page.relative_to(DOCS))
    return [
        Block(name, marker or None, argument, language, code)
        for marker, argument, language, code in BLOCK.findall(page.read_text())
    ]


BLOCKS = [block for page in PAGES for block in page_blocks(page)]
RUN_PAGES = sorted(
    {block.page for block in BLOCKS if block.marker != "no-run" and block.language != "json"}
)


def test_blocks_are_of_known_languages_and_markers():
    assert {block.language for block in BLOCKS} <= {"python", "bash", "json"}
    assert all(block.marker != "run-with" or block.language == "bash" for block in BLOCKS)
    assert all(block.argument.strip() for block in BLOCKS if block.marker)
    assert sum(block.language == "python" for block in BLOCKS) >= 5


def test_few_blocks_are_kept_from_running_each_with_its_reason():
    not_run = [block for block in BLOCKS if block.marker == "no-run"]
    assert len(not_run) <= MOST_NOT_RUN, [(block.page, block.argument) for block in not_run]
    assert all(len(block.argument.split()) >= 3 for block in not_run)


def test_the_json_blocks_are_run_records_as_the_store_reads_them():
    records = [json.loads(block.code) for block in BLOCKS if block.language == "json"]
    assert records
    for record in records:
        assert record_problem(record, record["run_id"]) is None
        assert record["schema_version"] == SCHEMA_VERSION
        assert record["numerics"] == NUMERICS_VERSION


def shell_line(line: str, appended: str) -> str:
    """``line`` with ``appended`` added to a command ``EXTENDED`` names (before its comment)."""
    command = re.sub(r"\s+#.*$", "", line)
    return f"{command} {appended}" if appended and EXTENDED.match(command) else command


def test_run_with_goes_before_a_trailing_comment():
    assert shell_line("python -m lipnorm_exp model=gt   # a comment", "a=1") == (
        "python -m lipnorm_exp model=gt a=1"
    )
    assert shell_line("python -m lipnorm_exp.report --runs r", "a=1") == (
        "python -m lipnorm_exp.report --runs r"
    )


@pytest.mark.slow
@pytest.mark.docs
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("mkdocstrings", reason="the docs extra (in all)")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "lipschitz_normalize" in (site / "api" / "nn" / "index.html").read_text()
    assert "Findings" in (site / "results" / "index.html").read_text()
    assert (site / "results" / "SCORECARD" / "index.html").is_file()
    assert (site / "results" / "bench" / "layers" / "index.html").is_file()


@pytest.mark.slow
@pytest.mark.docs
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_code_blocks_of_a_page_run(page, tmp_path, data_dir):
    (tmp_path / "examples").symlink_to(REPO / "examples")
    path = os.pathsep.join((str(Path(sys.executable).parent), os.environ["PATH"]))
    env = environment(LIPNORM_DATA_DIR=str(data_dir), OMP_NUM_THREADS="1", PATH=path)
    for block in page_blocks(DOCS / page):
        if block.marker == "no-run" or block.language == "json":
            continue
        if block.language == "python":
            commands = [[sys.executable, "-c", block.code]]
        else:
            appended = block.argument if block.marker == "run-with" else ""
            lines = [line for line in block.code.splitlines() if line.strip()]
            commands = [["bash", "-c", shell_line(line, appended)] for line in lines]
        for command in commands:
            done = subprocess.run(
                command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, (
                f"{command[-1]}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
            )
