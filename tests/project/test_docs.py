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
MOST_NOT_RUN = 4


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


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for the module's tests with every warning an error."""
    pytest.importorskip("mkdocstrings", reason="the docs extra (in all)")
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return site


@pytest.mark.slow
@pytest.mark.docs
def test_the_site_builds_with_warnings_as_errors(site):
    assert "lipschitz_normalize" in (site / "api" / "nn" / "index.html").read_text()
    assert "Findings" in (site / "results" / "findings" / "index.html").read_text()
    assert "Results and findings" in (site / "results" / "index.html").read_text()
    assert (site / "results" / "SCORECARD" / "index.html").is_file()
    assert (site / "results" / "bench" / "layers" / "index.html").is_file()


#: the report's figures the Findings page shows, as images: the paper's Figs. 2, 3, 5 and 6
FINDINGS_FIGURES = [
    "paper/published/figures/fig2_gradients.png",
    "paper/published/figures/fig3_train_acc.png",
    "paper/standard/figures/fig2_gradients.png",
    "paper/published/figures/fig6_depth.png",
    "paper/alon_yahav/figures/fig5_trees.png",
]


@pytest.mark.slow
@pytest.mark.docs
def test_the_findings_show_the_papers_figures_as_images(site):
    page = site / "results" / "findings" / "index.html"
    shown = re.findall(r'<img [^>]*src="([^"]+)"', page.read_text())
    assert [source.split("../", 1)[-1] for source in shown] == FINDINGS_FIGURES
    for source in shown:
        assert (page.parent / source).resolve().is_file(), source
        assert (page.parent / source).resolve().read_bytes() == (
            REPO / "results" / source.split("../", 1)[-1]
        ).read_bytes()


@pytest.mark.slow
@pytest.mark.docs
def test_a_wide_table_scrolls_within_the_page(site):
    scorecard = (site / "results" / "SCORECARD" / "index.html").read_text()
    assert "stylesheets/tables.css" in scorecard and "<table>" in scorecard
    rules = (site / "stylesheets" / "tables.css").read_text()
    assert re.search(r"table:not\(\[class\]\) \{[^}]*overflow-x: auto;", rules)


#: a reST role as Markdown leaves it: the role's name, then its target as code
RAW_ROLE = re.compile(r":(?:math|class|func|meth|attr|mod|obj|data|exc|ref):<code>")
#: code, where a page may quote reST (docs/contributing.md does)
CODE = re.compile(r"<code>.*?</code>|<pre>.*?</pre>", re.S)
#: the text of MathML's tokens
MATH_TOKEN = re.compile(r"<(mi|mo|mn|mtext)\b[^>]*>([^<]*)</\1>")


@pytest.mark.slow
@pytest.mark.docs
def test_the_site_shows_math_and_links_not_restructuredtext(site):
    pages = {path.relative_to(site).as_posix(): path.read_text() for path in site.rglob("*.html")}
    for name, html in pages.items():
        assert not RAW_ROLE.search(html), (name, RAW_ROLE.search(html))
        assert ".. math::" not in CODE.sub("", html), name
        assert 'class="arithmatex"' not in html, f"{name}: TeX left untypeset"
        tokens = [text for _, text in MATH_TOKEN.findall(html) if "\\" in text]
        assert not tokens, f"{name}: TeX commands the converter did not know: {tokens[:5]}"
    layers = pages["api/nn/index.html"]
    assert layers.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') >= 10
    assert layers.count("<math ") >= 200
    # the docstrings' references are links into the reference
    assert 'href="#lipnorm_exp.nn.GATLipschitzNorm"><code>GATLipschitzNorm</code></a>' in layers


@pytest.mark.slow
@pytest.mark.docs
def test_every_page_builds_to_a_file_of_its_own(site):
    """The site's search index holds one entry per page, at the page's address."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files

    config = load_config(str(REPO / "mkdocs.yml"))
    pages = config.plugins.on_files(get_files(config), config=config).documentation_pages()
    entries = json.loads((site / "search" / "search_index.json").read_text())["docs"]
    addresses = [entry["location"] for entry in entries if "#" not in entry["location"]]
    assert len(addresses) == len(set(addresses)) == len(pages)


@pytest.mark.docs
def test_two_pages_on_one_file_fail_the_build():
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File, get_files

    config = load_config(str(REPO / "mkdocs.yml"))
    files = get_files(config)
    config.plugins.on_files(files, config=config)  # as the site is: one file each
    files = get_files(config)
    files.append(File("results/index.md", str(REPO / "docs"), config.site_dir, True))
    with pytest.raises(PluginError, match="results.md, results/index.md -> results/index.html"):
        config.plugins.on_files(files, config=config)


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
