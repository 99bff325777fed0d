"""The reproduction scorecard: the paper's numbers and claims, ours beside them, a verdict each.

Every number of Tables 1–3 and every claim the paper's text makes about Figs. 2, 3, 5 and 6,
with a verdict by one rule.

Made from records only, preset by preset (`PRESETS`:
each one's paper tables and claims): the runs of each preset at ``scale=paper`` under the
protocol its paper
grid runs (`paper_protocol`: ``published`` for Tables 1–3 and
Figs. 2, 3 and 6, ``alon_yahav`` for Fig. 5), each number selected as its table selects it
(`lipnorm_exp.report.aggregate`). The verdicts and their rule are those of
`lipnorm_exp.report.verdicts`; the claims and theirs, `lipnorm_exp.report.claims`.
Written as ``SCORECARD.md`` (counts first, then one line per number or claim) and
``scorecard.csv`` beside it; the same records give the same bytes.
"""

import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pandas as pd

from lipnorm_exp.records.identity import REPORTING_SEEDS_FROM
from lipnorm_exp.records.labels import dataset_label, missing_label
from lipnorm_exp.records.numerics import NUMERICS_VERSION
from lipnorm_exp.records.verify import OLD_RULE, PASSING, rejudged
from lipnorm_exp.report.aggregate import CSV_DECIMALS, HELD_OUT_SEEDS, hyper_settings, select
from lipnorm_exp.report.cell_columns import N
from lipnorm_exp.report.coverage import SCORED_SCALE, coverage, paper_preset_runs
from lipnorm_exp.report.paper_presets import PRESETS, Preset
from lipnorm_exp.report.run_row import GIT_COMMIT, LABEL, NUMERICS, RUN_ID
from lipnorm_exp.report.tables import Column, TableSpec
from lipnorm_exp.report.verdicts import (
    DIFFERS,
    DIVERGED_ALL,
    NOT_RUN,
    SETTLED_SEEDS,
    TOLERANCE_POINTS,
    VERDICTS,
    LineNumbers,
    ScoreLine,
    departures,
    not_run_reason,
    number_verdict,
    provisional,
    run_facts,
)
from lipnorm_exp.util.atomic import write_whole

MARKDOWN, CSV = "SCORECARD.md", "scorecard.csv"
#: the columns of the CSV file, in order
FIELDS = ("item", "subject", "paper", "ours", "verdict", "why", "protocol", "epochs", "seeds")
#: how the CSV file's ``subject`` of a claim states its rule: ``<subject> (rule: <rule>)``
RULE = " (rule: "


def _column(spec: TableSpec, key: tuple) -> Column:
    """The table column of a key of the paper's values.

    The values are `published_numbers`'s.
    """
    dataset, value = key
    return Column(dataset, 0.0, value) if spec.depth_columns else Column(dataset, value)


def _title(item: str, label: str, column: Column) -> str:
    if column.depth is not None:
        return f"{label}, {dataset_label(column.dataset)} {column.depth} layers"
    return f"{label}, {dataset_label(column.dataset)} {missing_label(column.missing_rate)} missing"


def table_lines(frame: pd.DataFrame, preset: Preset, spec: TableSpec) -> list[ScoreLine]:
    """One line per published number of ``spec``, a table of ``preset``."""
    runs, grid, protocol = paper_preset_runs(frame, preset.name)
    item = spec.item
    lines = []
    for label, values in spec.paper.items():
        for key, published in values.items():
            column = _column(spec, key)
            subject = _title(item, label, column)
            cell = None if runs is None else runs[(runs[LABEL] == label) & column.matches(runs)]
            chosen = None if cell is None else select(cell)
            if chosen is None:
                why = not_run_reason(frame, column.dataset)
                lines.append(ScoreLine(item, subject, str(published), "–", NOT_RUN, why, protocol))
                continue
            verdict = number_verdict(chosen.mean, published) if chosen.n else DIVERGED_ALL
            why = ""
            if verdict == DIFFERS:
                assert grid is not None, "runs come with their preset's grid"
                settings = hyper_settings(cell, grid)
                why = departures(chosen.runs, cell, published.depth, preset.budget, settings)
            unsettled = provisional(chosen, published)
            why = "; ".join(filter(None, (unsettled, why)))
            ours = chosen.text(show_depth=column.depth is None)
            if pd.notna(chosen.ci95):
                ours += f" (95% CI ± {chosen.ci95:.1f})"
            if pd.notna(chosen.other.mean):
                ours += f"; {chosen.other_title} {chosen.other.text()}"
            facts = run_facts(chosen.runs, protocol)
            numbers = LineNumbers(
                paper_mean=published.mean,
                paper_std=published.std,
                ours_mean=chosen.mean,
                ours_std=chosen.std,
                n=chosen.n,
                final_mean=chosen.final.mean,
                final_std=chosen.final.std,
            )
            lines.append(
                ScoreLine(
                    item,
                    subject,
                    str(published),
                    ours,
                    verdict,
                    why,
                    **facts,
                    numbers=numbers,
                    provisional=bool(unsettled),
                )
            )
    return lines


def claim_lines(frame: pd.DataFrame, preset: Preset) -> list[ScoreLine]:
    """The lines of every claim ``preset`` checks."""
    runs, grid, protocol = paper_preset_runs(frame, preset.name)
    lines = []
    for claim in preset.claims:
        lines += claim(runs, grid, protocol, lambda dataset: not_run_reason(frame, dataset))
    return lines


def scorecard(frame: pd.DataFrame) -> list[ScoreLine]:
    """Every line of the scorecard, from the records of ``frame`` (``load_records``).

    Every preset's published numbers first, then every preset's claims (`PRESETS` order).
    """
    numbers = [
        line
        for preset in PRESETS
        for spec in preset.paper_tables
        for line in table_lines(frame, preset, spec)
    ]
    return numbers + [line for preset in PRESETS for line in claim_lines(frame, preset)]


def budget_text() -> str:
    """The paper's budget, as the scorecard's header says it: ``1000 epochs and 5 seeds, ...``.

    The epochs and seeds of the first preset with published numbers, then, for each other such
    preset (`title`), those that differ: its
    seeds, and its epochs where it has paper tables (whose numbers are checked against them;
    ``, 10 for TREES``: a TREES run counts passes over its trees, not epochs).
    """
    scored = [preset for preset in PRESETS if preset.published]
    first = scored[0].budget
    parts = [f"{first.epochs} epochs and {first.seeds} seeds"]
    for preset in scored[1:]:
        budget = preset.budget
        epochs = f"{budget.epochs} epochs" if preset.paper_tables else ""
        epochs = epochs if budget.epochs != first.epochs else ""
        seeds = f"{budget.seeds}" if budget.seeds != first.seeds else ""
        if epochs or seeds:
            seeds = f"{seeds} seeds" if epochs and seeds else seeds
            parts.append(f"{' and '.join(filter(None, (epochs, seeds)))} for {preset.title}")
    return ", ".join(parts)


def counts(lines: list[ScoreLine], only_provisional: bool = False) -> dict[str, int]:
    """Lines per verdict, in the order of `VERDICTS`.

    ``only_provisional``: of the lines whose verdict is provisional only.
    """
    tally = Counter(line.verdict for line in lines if line.provisional or not only_provisional)
    return {verdict: tally.get(verdict, 0) for verdict in VERDICTS}


def counted(lines: list[ScoreLine], verdict: str) -> str:
    """``11`` lines of ``verdict``, ``11 (3 provisional)`` where some are provisional."""
    total, unsettled = counts(lines)[verdict], counts(lines, True)[verdict]
    return f"{total} ({unsettled} provisional)" if unsettled else str(total)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


#: the findings of ``lipnorm-exp-verify`` ([`lipnorm_exp.cli.verify`][lipnorm_exp.cli.verify]),
#: beside the scorecard
FINDINGS = "verification.csv"
#: the columns of the findings read besides ``run_id``: what verification found, by which rule,
#: the commit of the record it verified (findings of before it was kept lack it) and the code
#: that verified it
VERDICT: Final = "verdict"
JUDGED_BY: Final = "rule"
STORED_COMMIT: Final = "stored_commit"
VERIFIED_AT: Final = "verified_at"
#: no line of ``SCORECARD.md`` is longer
MAX_LINE = 400


@dataclass(frozen=True)
class Provenance:
    """What stands behind a line: the numerics of its records, and what verification found.

    Args:
        numerics: ``v1 ×3`` (three records of numerics version 1), ``unversioned ×3`` (made
            before numerics were versioned), several parts where they are mixed.
        current: whether every record is of today's numerics version.
        verified: ``identical 1 of 3 at f60c9eb`` (what ``lipnorm-exp-verify`` found, of how
            many records, with which code; a verdict of an earlier rule says so: ``within spread
            (old rule)``), or ``""`` where none was verified.
        passed: whether a record of the line was found identical or the same up to rounding
            ([`PASSING`][lipnorm_exp.records.verify.PASSING]): a verified line. An earlier rule's
            ``within spread`` verifies nothing.
    """

    numerics: str
    current: bool
    verified: str
    passed: bool = False


def provenance(line: ScoreLine, frame: pd.DataFrame, findings: pd.DataFrame) -> Provenance:
    """The `Provenance` of ``line`` from the records of ``frame`` and the findings.

    A finding counts for the record it verified: one whose ``stored_commit`` is not the
    record's commit is of a record since replaced (trained again and merged in its place).
    """
    if not line.runs:
        return Provenance("", True, "")
    by_run = frame.set_index(RUN_ID)
    versions = by_run[NUMERICS].reindex(list(line.runs))
    tally = Counter("unversioned" if pd.isna(v) else f"v{int(v)}" for v in versions)
    numerics = ", ".join(f"{name} ×{n}" for name, n in sorted(tally.items()))
    current = set(tally) == {f"v{NUMERICS_VERSION}"}
    found = findings[findings[RUN_ID].isin(line.runs)]
    if STORED_COMMIT in found:  # a finding is of the record it verified, not of a later one
        made_by = found[RUN_ID].map(by_run[GIT_COMMIT]).astype(str)
        found = found[found[STORED_COMMIT].isna() | (found[STORED_COMMIT].astype(str) == made_by)]
    verified = ""
    if not found.empty:
        rules = found[JUDGED_BY] if JUDGED_BY in found else pd.Series(None, index=found.index)
        old = " (old rule)"
        verdicts = Counter(
            v + (old if r == OLD_RULE else "") for v, r in zip(found[VERDICT], rules, strict=True)
        )
        commits = sorted({str(commit)[:7] for commit in found[VERIFIED_AT]})
        verified = (
            ", ".join(f"{verdict} {n}" for verdict, n in sorted(verdicts.items()))
            + f" of {len(line.runs)} at {', '.join(commits)}"
        )
    passed = bool(found[VERDICT].isin(PASSING).any())
    return Provenance(numerics, current, verified, passed)


def read_findings(out_dir: Path) -> pd.DataFrame:
    """The findings beside the scorecard (`FINDINGS`), or none.

    Each names the rule that judged it ([`rejudged`][lipnorm_exp.records.verify.rejudged]).
    """
    path = out_dir / FINDINGS
    if not path.exists():
        return pd.DataFrame(columns=[RUN_ID, VERDICT, JUDGED_BY, VERIFIED_AT])
    return rejudged(pd.read_csv(path, dtype={RUN_ID: str, VERIFIED_AT: str}))


def _wrapped(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, 100, subsequent_indent=indent, break_on_hyphens=False)


def summary_rows(lines: list[ScoreLine], marks: list[Provenance]) -> list[str]:
    """The summary table: per item, lines per verdict, on today's numerics, verified."""
    items = list(dict.fromkeys(line.item for line in lines))
    head = ["item", *VERDICTS, "lines", "on current numerics", "verified"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for item in [*items, "all"]:
        chosen = [(ln, m) for ln, m in zip(lines, marks, strict=True) if item in (ln.item, "all")]
        item_lines = [line for line, _ in chosen]
        tally = counts(item_lines)
        run = [mark for line, mark in chosen if line.runs]
        cells = [
            f"**{item}**" if item == "all" else item,
            *(counted(item_lines, verdict) if tally[verdict] else "" for verdict in VERDICTS),
            str(len(chosen)),
            f"{sum(mark.current for mark in run)}/{len(run)}",
            f"{sum(mark.passed for mark in run)}/{len(run)}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def markdown(lines: list[ScoreLine], marks: list[Provenance], covered: str) -> str:
    """``SCORECARD.md``: what the records cover, the summary, one row per line, its details.

    ``covered`` is `coverage` of the records.
    """
    tally = ", ".join(f"{counted(lines, verdict)} {verdict}" for verdict in VERDICTS)
    intro = (
        "Every number of the paper's Tables 1–3 and every claim its text makes about Figs. 2, "
        "3, 5 and 6, ours beside the paper's. Made from the run records only "
        f"(`make scorecard`), at scale `{SCORED_SCALE}`, each preset under the protocol its paper "
        "grid runs; a number is selected as its table selects it (best mean validation accuracy "
        "over the settings run on the most seeds; test accuracy at the epoch the records' "
        "protocol reports, the best validation epoch unless `protocol.reported_epoch` is "
        "`final`, mean ± std over the n seeds, the sample std unless `protocol.std_ddof` is 0); "
        "beside it, the same runs' number at the other epoch (`final`: the last one) where "
        "every seed trained its full budget."
    )
    rule = (
        "Verdicts: **reproduced**: within ± max(the paper's std, "
        f"{TOLERANCE_POINTS:g} points) of the paper's number; **differs**: outside it (its "
        "details say where the runs depart from the paper's setup: its "
        f"{budget_text()}, its depth, its hyper-parameter search); **holds** / **fails**: a "
        "claim, by the rule its details state; **diverged**: every seed diverged; **not run**: "
        "no records, and why. A number's verdict is provisional where it rests on fewer than "
        f"{HELD_OUT_SEEDS} seeds, on the seeds that chose its setting among several (its "
        "details say which), or where its mean lies within one standard error of the band's "
        f"edge over fewer than {SETTLED_SEEDS} seeds (more seeds could flip it); the summary "
        f"counts provisional verdicts apart. A setting is chosen on seeds below "
        f"{REPORTING_SEEDS_FROM} and, "
        f"where {HELD_OUT_SEEDS} or more seeds from {REPORTING_SEEDS_FROM} on ran it, reported "
        "over those, which chose nothing; each number gives the 95% confidence interval of its "
        "mean (Student's t)."
    )
    columns = (
        "**numerics**: the numerics version of the records a line rests on "
        f"(today's: v{NUMERICS_VERSION}; `unversioned`: made before versions were kept); "
        "**verified**: what `lipnorm-exp-verify` found when it trained those records again "
        f"(`{FINDINGS}`), and with which code: `identical`, `same up to rounding` (the "
        "histories part by no more than rounding explains, epoch by epoch) or `different`; "
        "`within spread (old rule)`: judged by the earlier rule, which compared the final test "
        "accuracy only and passes another seed of a setting in 45% of pairs "
        "(`verify_calibration.md`), so it verifies nothing. The "
        "summary counts a line verified where a record of it is identical or the same up to "
        "rounding."
    )
    out = ["# Reproduction scorecard", "", *_wrapped(covered, ""), ""]
    out += [f"**{len(lines)} lines: {tally}.**", ""]
    for paragraph in (intro, rule, columns):
        out += [*_wrapped(paragraph, ""), ""]
    out += ["## Summary", "", *summary_rows(lines, marks), "", "## Lines", ""]
    head = ("#", "item", "what", "paper", "ours", "verdict", "numerics", "verified")
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, (line, mark) in enumerate(zip(lines, marks, strict=True), 1):
        values: tuple[str, ...] = (
            f"[{k}](#line-{k})",
            line.item,
            line.subject,
            line.paper,
            line.ours,
            line.verdict,
        )
        values += (mark.numerics + ("" if mark.current else " ⚠"), mark.verified)
        out.append("| " + " | ".join(_cell(str(value)) for value in values) + " |")
    out += ["", "## Details", ""]
    for k, line in enumerate(lines, 1):
        out += [f'<a id="line-{k}"></a>**{k}. {line.item}: {_cell(line.subject)}**']
        if line.rule:
            out += _wrapped("- rule: " + line.rule)
        if line.why:
            out += _wrapped("- why: " + line.why)
        if line.runs:
            out += [f"- {line.protocol}, {line.epochs} epochs, seeds {line.seeds}; runs:"]
            out += [f"  {' '.join(line.runs[i : i + 5])}" for i in range(0, len(line.runs), 5)]
        out.append("")
    return "\n".join(out)


def table(lines: list[ScoreLine], marks: list[Provenance]) -> pd.DataFrame:
    """``scorecard.csv``'s rows: the numbers as numbers, the text fields, the run ids."""
    rows = [
        (
            *_text(line),
            *_numbers(line.numbers),
            mark.numerics,
            mark.current,
            mark.verified,
            " ".join(line.runs),
        )
        for line, mark in zip(lines, marks, strict=True)
    ]
    frame = pd.DataFrame(rows, columns=[*FIELDS, *NUMBERS, *PROVENANCE, "runs"])
    frame[N] = frame[N].astype("Int64")
    for column in NUMBERS:
        if column != N:
            frame[column] = pd.to_numeric(frame[column]).astype(float)
    return frame


def _text(line: ScoreLine) -> tuple[str, ...]:
    """The CSV file's text columns of ``line`` (`FIELDS`); a claim's subject states its rule."""
    subject = f"{line.subject}{RULE}{line.rule})" if line.rule else line.subject
    return (
        line.item,
        subject,
        line.paper,
        line.ours,
        line.verdict,
        line.why,
        line.protocol,
        line.epochs,
        line.seeds,
    )


def _numbers(given: LineNumbers | None) -> tuple[float | int | None, ...]:
    """The CSV file's numeric columns of a line (`NUMBERS`): none for a claim or a line not run."""
    if given is None:
        return (None,) * len(NUMBERS)
    return (
        given.paper_mean,
        given.paper_std,
        _rounded(given.ours_mean),
        _rounded(given.ours_std),
        given.n,
        _rounded(given.ours_mean - given.paper_mean),
        _rounded(given.final_mean),
        _rounded(given.final_std),
    )


def _rounded(value: float | None) -> float | None:
    """A number in % as the CSV file holds it (`CSV_DECIMALS` decimals)."""
    return None if value is None else round(value, CSV_DECIMALS)


#: the numeric columns of the CSV file
NUMBERS = (
    "paper_mean",
    "paper_std",
    "ours_mean",
    "ours_std",
    N,
    "difference",
    "final_mean",
    "final_std",
)
#: its provenance columns
PROVENANCE = ("numerics", "current_numerics", "verified")


def write_scorecard(frame: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Write ``SCORECARD.md`` and ``scorecard.csv`` into ``out_dir`` (each whole or not at all).

    The verification findings are read from ``out_dir`` (`FINDINGS`) where present.
    """
    lines = scorecard(frame)
    findings = read_findings(out_dir)
    marks = [provenance(line, frame, findings) for line in lines]
    texts = {
        MARKDOWN: markdown(lines, marks, coverage(frame)),
        CSV: table(lines, marks).to_csv(index=False),
    }
    return [write_whole(out_dir / name, text) for name, text in texts.items()]


__all__ = [
    "CSV",
    "FINDINGS",
    "MARKDOWN",
    "MAX_LINE",
    "Provenance",
    "budget_text",
    "claim_lines",
    "counts",
    "markdown",
    "provenance",
    "read_findings",
    "scorecard",
    "summary_rows",
    "table",
    "table_lines",
    "write_scorecard",
]
