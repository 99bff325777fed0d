"""README.md's Python examples run as printed, each on its own, in an empty folder, and its
results section quotes the report's tables and the scorecard's counts as they are; the numbers
its prose (and docs/getting-started.md's, results/README.md's) gives about the results are the
scorecard's, the tables' and the records'."""

import csv
import json
import re
import subprocess
import sys

import pytest
from cli_helpers import environment
from conftest import REPO

README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"
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


# The prose around the tables: each number it quotes about the results is checked against the
# scorecard (results/scorecard.csv), the report's tables or the records, so none can drift.
#: the README with its lines joined, as its prose reads
PROSE = " ".join(README.split())
#: the scorecard's lines, by item ("Table 1") and subject ("GAT, Cora 100% missing")
SCORECARD = {
    (row["item"], row["subject"]): row
    for row in csv.DictReader((REPO / "results" / "scorecard.csv").open())
}
#: the counts the README writes in words
WORDS = dict(enumerate("no one two three four five six seven eight nine ten".split()))


def ours(item: str, subject: str) -> str:
    """Our number on the scorecard's line (``75.3 ± 1.7``, Table 1's with its depth: ``(11)``)."""
    return SCORECARD[item, subject]["ours"].split(" n=")[0]


def mean(number: str) -> str:
    return number.split(" ± ")[0]


def listed(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def test_the_readmes_table1_tally_is_the_scorecards():
    cells = [  # run, over seeds that chose nothing (a number over choosing seeds is provisional)
        row
        for (item, _), row in SCORECARD.items()
        if item == "Table 1" and row["n"] and not row["seeds"].startswith("0")
    ]
    reproduced = [row for row in cells if row["verdict"] == "reproduced"]
    others = [row for row in cells if row["verdict"] != "reproduced"]
    above = [row for row in others if float(row["difference"]) > 0]
    below = [row for row in others if float(row["difference"]) < 0 and " 0%" in row["subject"]]
    deep_below = [
        row for row in others if float(row["difference"]) < 0 and "100%" in row["subject"]
    ]
    assert all("100%" in row["subject"] for row in above)
    datasets = list(dict.fromkeys(row["subject"].split(", ")[1].split()[0] for row in cells))
    gaps = sorted(-float(row["difference"]) for row in below)
    gap = f"{gaps[0]:.1f}–{gaps[-1]:.1f} points"
    assert f"{len(reproduced)} of Table 1's {len(cells)} {listed(datasets)} cells" in PROSE
    assert (
        f"of the other {len(others)}, {WORDS[len(above)]} are above the paper at 100% missing "
        f"vectors, {WORDS[len(below)]} {gap} below it at 0%"
    ) in PROSE
    for row in deep_below:  # named one by one, with the gap
        model, dataset = row["subject"].split(", ")
        named = f"{model} on {dataset.split()[0]} 100% {-float(row['difference']):.1f} below it"
        assert named in PROSE
    models = [
        f"{listed([row['subject'].split(',')[0] for row in below if dataset in row['subject']])}"
        f" on {dataset}"
        for dataset in datasets
        if any(dataset in row["subject"] for row in below)
    ]
    assert f"**Below the paper at 0% missing** ({', '.join(models)}; {gap} over" in PROSE
    assert re.findall(r"\d+\.\d–\d+\.\d points", PROSE) == [gap, gap]


def test_the_readmes_words_on_table3_and_table1_are_the_scorecards():
    gat = {layers: ours("Table 3", f"GAT, Cora {layers} layers") for layers in (15, 30)}
    paper = {
        (model, layers): float(
            mean(SCORECARD["Table 3", f"{model}, Cora {layers} layers"]["paper"])
        )
        for model in ("GAT", "GAT-Lip")
        for layers in (15, 30)
    }
    n = SCORECARD["Table 3", "GAT, Cora 30 layers"]["n"]
    assert f"30-layer GAT on Cora trains to {gat[30]}% ({n} seeds)" in PROSE
    assert f"where the paper reports {paper['GAT', 30]}%" in PROSE
    assert (
        f"plain GAT reaches {mean(gat[15])} at 15 layers and {mean(gat[30])} at 30 "
        f"(paper {paper['GAT', 15]} and {paper['GAT', 30]})"
    ) in PROSE
    leads = [round(paper["GAT-Lip", layers] - paper["GAT", layers]) for layers in (15, 30)]
    assert f"where the paper reports {leads[0]} and {leads[1]} points" in PROSE
    gat_cora = SCORECARD["Table 1", "GAT, Cora 100% missing"]["ours"]
    final = re.search(r"final (\S+)", gat_cora).group(1)
    assert f"{mean(gat_cora)} at the best validation epoch, {final} at the last" in PROSE
    depths = [
        re.search(r"\((\d+)\)", ours("Table 1", f"GAT-Lip, {dataset} 100% missing")).group(1)
        for dataset in ("Cora", "CiteSeer")
    ]
    assert f"GAT-Lip best at {depths[0]} layers on Cora and {depths[1]} on CiteSeer" in PROSE


@pytest.mark.parametrize("item", ["Table 1", "Table 3"])
def test_the_epochs_a_table_paragraph_names_are_those_of_its_cells(item):
    paragraph = README[README.index(f"**{item}**, test accuracy") :].split("\n|")[0]
    named = {int(epochs) for epochs in re.findall(r"(\d+) epochs", paragraph)}
    run = {int(row["epochs"]) for (of, _), row in SCORECARD.items() if of == item and row["n"]}
    assert named
    assert named <= run


def test_every_accuracy_in_the_readmes_results_is_one_the_report_made():
    """A number with one decimal in the main finding and the results section (the tables
    aside, checked above) is, rounded, a number of the report's files."""
    made = {
        round(abs(float(number)), 1)
        for path in [REPO / "results" / "scorecard.csv", *TABLES.parent.parent.glob("*/tables/*")]
        if path.suffix in (".csv", ".md")
        for number in re.findall(r"-?\d+\.\d+", path.read_text())
    }
    start = README.index("**Main finding**")
    text = README[start : README.index("## License")]
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
    quoted = re.findall(r"(?<![\w.])(\d+\.\d)(?![\d.]*\d)", prose)
    assert len(quoted) >= 20
    assert [number for number in quoted if float(number) not in made] == []


#: a machine named by its maker (``AMD EPYC``, ``NVIDIA H200``)
MACHINE_NAME = re.compile(r"\b(?:AMD|Intel|NVIDIA) [A-Z][\w-]*")


def test_the_machines_named_are_those_the_records_ran_on():
    ran_on: set[str] = set()
    for path in (REPO / "results" / "runs").rglob("*.json"):
        machine = json.loads(path.read_text()).get("machine") or {}
        names = (machine.get("processor_model", ""), machine.get("device", ""))
        ran_on |= {re.sub(r"\((?:R|TM)\)", "", name) for name in names}  # Intel(R) Xeon(R)
    pages = [REPO / "README.md", REPO / "results" / "README.md", *sorted(DOCS.rglob("*.md"))]
    named = {(page.name, name) for page in pages for name in MACHINE_NAME.findall(page.read_text())}
    assert len(named) >= 2
    assert {(page, name) for page, name in named if not any(name in ran for ran in ran_on)} == set()


def test_the_machine_section_counts_the_records_as_they_are():
    """results/README.md's Machine section: how many records name each kind of machine."""
    kinds = {"epyc": 0, "xeon": 0, "cpu without model": 0, "no machine": 0, "cuda": 0}
    for path in (REPO / "results" / "runs").rglob("*.json"):
        machine = json.loads(path.read_text()).get("machine")
        if not machine:
            kinds["no machine"] += 1
        elif machine.get("device", "").startswith("cuda"):
            kinds["cuda"] += 1
        elif "AMD EPYC" in machine.get("processor_model", ""):
            kinds["epyc"] += 1
        elif "Intel(R) Xeon(R)" in machine.get("processor_model", ""):
            kinds["xeon"] += 1
        else:
            kinds["cpu without model"] += 1
    section = (REPO / "results" / "README.md").read_text().split("## Machine", 1)[1]
    section = " ".join(section.split("\n## ", 1)[0].split())
    said = {
        "epyc": r"the (\d+) records that name their processor name an AMD EPYC",
        "xeon": r"(\d+) name an Intel\(R\) Xeon\(R\)",
        "cpu without model": r"(\d+) more name a 2-core CPU without its model",
        "no machine": r"the (\d+) earliest name no machine",
        "cuda": r"(\d+) records, Cora at 30 layers, each naming `cuda:0",
    }
    found = {}
    for kind, pattern in said.items():
        match = re.search(pattern, section)
        found[kind] = int(match.group(1)) if match else None
    assert found == kinds


def set_up_section(text: str) -> str:
    return text[text.index("## Set-up on a fresh machine") :].split("\n## ")[0]


def test_getting_started_quotes_the_readmes_set_up_times():
    """The times of the two set-up commands, each as measured, are the same on both pages."""
    duration = re.compile(r"\b\d+ (?:s|min(?:utes)?|h(?:ours)?)\b")
    times = duration.findall(set_up_section(README))
    assert len(times) >= 3
    assert duration.findall(set_up_section((DOCS / "getting-started.md").read_text())) == times


def test_the_findings_name_every_depth_table1_ran():
    """results/README.md's account of Table 1's runs names the depths its caption lists."""
    caption = (TABLES / "table1_missing_vector.md").read_text()
    ran = set()
    for part in re.search(r"among the depths run, ([\d–, ]+);", caption).group(1).split(", "):
        low, _, high = part.partition("–")
        ran |= set(range(int(low), int(high or low) + 1))
    findings = " ".join((REPO / "results" / "README.md").read_text().split())
    account = findings.split("seed 0 at depths ", 1)[1].split(" and seeds 1–2")[0]
    named = {int(depth) for depth in re.findall(r"\b(\d+)\b(?!%)", account)}
    assert named == ran
