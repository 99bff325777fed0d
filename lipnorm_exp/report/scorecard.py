"""The reproduction scorecard: the paper's numbers and claims, ours beside them, a verdict each.

Every number of Tables 1–3 and every claim the paper's text makes about Figs. 2, 3, 5 and 6,
with a verdict by one rule.

Made from records only, preset by preset (:data:`~lipnorm_exp.report.paper_presets.PRESETS`:
each one's paper tables and claims): the runs of each preset at ``scale=paper`` under the
protocol its paper
grid runs (:func:`~lipnorm_exp.report.presets.paper_protocol`: ``published`` for Tables 1–3 and
Figs. 2, 3 and 6, ``alon_yahav`` for Fig. 5), each number selected as its table selects it
(:mod:`lipnorm_exp.report.aggregate`). The verdicts and their rule are those of
:mod:`lipnorm_exp.report.verdicts`; the claims and theirs, :mod:`lipnorm_exp.report.claims`.
Written as ``SCORECARD.md`` (counts first, then one line per number or claim) and
``scorecard.csv`` beside it; the same records give the same bytes.
"""

from collections import Counter
from pathlib import Path

import pandas as pd

from lipnorm_exp.records.labels import dataset_label, missing_label
from lipnorm_exp.report.aggregate import (
    hyper_settings,
    preset_runs,
    select,
    usable_runs,
)
from lipnorm_exp.report.paper_presets import PRESETS, Preset
from lipnorm_exp.report.presets import PresetGrid, paper_protocol
from lipnorm_exp.report.tables import Column, TableSpec
from lipnorm_exp.report.verdicts import (
    DIFFERS,
    NOT_RUN,
    TOLERANCE_POINTS,
    VERDICTS,
    ScoreLine,
    departures,
    not_run_reason,
    number_verdict,
    run_facts,
)
from lipnorm_exp.util.atomic import write_whole

SCALE = "paper"
MARKDOWN, CSV = "SCORECARD.md", "scorecard.csv"
#: the columns of the CSV file, in order
FIELDS = ("item", "subject", "paper", "ours", "verdict", "why", "protocol", "epochs", "seeds")


def _preset_runs(
    frame: pd.DataFrame, preset: str
) -> tuple[pd.DataFrame | None, PresetGrid | None, str]:
    """The usable paper-scale runs of ``preset``, its grid and its paper protocol.

    The runs are those under that protocol; runs and grid are ``None`` where there are none.
    """
    protocol = paper_protocol(preset)
    found = preset_runs(usable_runs(frame, SCALE, protocol), preset, SCALE, protocol)
    return (*(found or (None, None)), protocol)


def _column(spec: TableSpec, key: tuple) -> Column:
    """The table column of a key of the paper's values (:mod:`~lipnorm_exp.report.paper`)."""
    dataset, value = key
    return Column(dataset, 0.0, value) if spec.depth_columns else Column(dataset, value)


def _title(item: str, label: str, column: Column) -> str:
    if column.depth is not None:
        return f"{label}, {dataset_label(column.dataset)} {column.depth} layers"
    return f"{label}, {dataset_label(column.dataset)} {missing_label(column.missing_rate)} missing"


def table_lines(frame: pd.DataFrame, preset: Preset, spec: TableSpec) -> list[ScoreLine]:
    """One line per published number of ``spec``, a table of ``preset``."""
    runs, grid, protocol = _preset_runs(frame, preset.name)
    item = spec.item
    lines = []
    for label, values in spec.paper.items():
        for key, published in values.items():
            column = _column(spec, key)
            subject = _title(item, label, column)
            cell = None if runs is None else runs[(runs["label"] == label) & column.matches(runs)]
            chosen = None if cell is None else select(cell)
            if chosen is None:
                why = not_run_reason(frame, column.dataset)
                lines.append(ScoreLine(item, subject, str(published), "–", NOT_RUN, why, protocol))
                continue
            verdict = number_verdict(chosen.mean, published)
            why = ""
            if verdict == DIFFERS:
                settings = hyper_settings(cell, grid)
                why = departures(chosen.runs, cell, published.depth, preset.budget, settings)
            ours = chosen.text(show_depth=column.depth is None)
            facts = run_facts(chosen.runs, protocol)
            lines.append(ScoreLine(item, subject, str(published), ours, verdict, why, **facts))
    return lines


def claim_lines(frame: pd.DataFrame, preset: Preset) -> list[ScoreLine]:
    """The lines of every claim ``preset`` checks."""
    runs, grid, protocol = _preset_runs(frame, preset.name)
    lines = []
    for claim in preset.claims:
        lines += claim(runs, grid, protocol, lambda dataset: not_run_reason(frame, dataset))
    return lines


def scorecard(frame: pd.DataFrame) -> list[ScoreLine]:
    """Every line of the scorecard, from the records of ``frame`` (``load_records``).

    Every preset's published numbers first, then every preset's claims (:data:`PRESETS` order).
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
    preset (:attr:`~lipnorm_exp.report.paper_presets.Preset.title`), those that differ: its
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


def counts(lines: list[ScoreLine]) -> dict[str, int]:
    """Lines per verdict, in the order of :data:`VERDICTS`."""
    tally = Counter(line.verdict for line in lines)
    return {verdict: tally.get(verdict, 0) for verdict in VERDICTS}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(lines: list[ScoreLine]) -> str:
    """``SCORECARD.md``: the rule, the counts, then one table row per line."""
    tally = ", ".join(f"{n} {verdict}" for verdict, n in counts(lines).items())
    header = (
        "# Reproduction scorecard\n\n"
        f"**{len(lines)} lines: {tally}.**\n\n"
        "Every number of the paper's Tables 1–3 and every claim its text makes about Figs. 2, "
        "3, 5 and 6, ours beside the paper's. Made from the run records only "
        f"(`make scorecard`), at scale `{SCALE}`, each preset under the protocol its paper grid "
        "runs; a number is selected as its table selects it (best mean validation accuracy "
        "over the settings run on the most seeds, test accuracy at the best validation epoch, "
        "mean ± std over the n seeds).\n\n"
        "Verdicts: **reproduced**: within ± max(the paper's std, "
        f"{TOLERANCE_POINTS:g} points) of the paper's number; **differs**: outside it, with "
        f"where the runs depart from the paper's setup (its {budget_text()}, and "
        "whether a seed was still improving; its depth; its hyper-parameter search) and ours at "
        "the paper's depth (naming its setting where that is not the preset's) and at the "
        "preset's own values where the number was chosen elsewhere, "
        "and how many other settings ran on too few seeds to be compared with it; "
        "**holds** / **fails**: a claim, by the rule its line "
        "states; **not run**: no records, and why. Runs: the records "
        "`results/runs/<run_id>.json` a line rests on.\n\n"
    )
    columns = (
        "item",
        "what",
        "paper",
        "ours",
        "verdict",
        "why",
        "protocol",
        "epochs",
        "seeds",
        "runs",
    )
    rows = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for line in lines:
        values = [getattr(line, field) for field in FIELDS] + [" ".join(line.runs)]
        rows.append("| " + " | ".join(_cell(str(value)) for value in values) + " |")
    return header + "\n".join(rows) + "\n"


def table(lines: list[ScoreLine]) -> pd.DataFrame:
    """``scorecard.csv``'s rows: :data:`FIELDS` and the run ids, space-separated."""
    rows = [
        {**{field: getattr(line, field) for field in FIELDS}, "runs": " ".join(line.runs)}
        for line in lines
    ]
    return pd.DataFrame(rows, columns=[*FIELDS, "runs"])


def write_scorecard(frame: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Write ``SCORECARD.md`` and ``scorecard.csv`` into ``out_dir`` (each whole or not at all)."""
    lines = scorecard(frame)
    texts = {MARKDOWN: markdown(lines), CSV: table(lines).to_csv(index=False)}
    return [write_whole(out_dir / name, text) for name, text in texts.items()]


__all__ = [
    "CSV",
    "MARKDOWN",
    "budget_text",
    "claim_lines",
    "counts",
    "markdown",
    "scorecard",
    "table",
    "table_lines",
    "write_scorecard",
]
