"""Seeds → one number: the selection rule shared by every table and figure.

Selection rule:

1. **One scale and one protocol at a time.** Records of different ``scale`` or
   ``protocol.name`` values are never mixed: each pair present gets its own tables and figures
   (``<out>/<scale>/<protocol>/``); ``--scale`` picks one scale by name (`report_groups`).
2. **A preset's own runs.** A table or figure of preset P takes only the records tagged P
   (``config.tags``: the preset's sweep put it there, or reused the record and added it) that
   its grid holds (`preset_runs`, `PresetGrid`). A
   run started by hand, or by another preset only, never enters it.
3. **By content.** Within those, a table cell or a point of a curve takes the records whose
   config matches it (dataset name, missing rate, model label, depth, ...), never folder names.
4. **Failed runs** (an error, no result) are left out and only counted. **Diverged runs**
   (loss NaN/inf) are counted, never averaged: a mean is over the seeds that did not
   diverge, with ``†k`` beside it for the k that did, and a cell or point whose seeds all
   diverged reads ``†k`` with no number (`usable_runs`, `Selection`).
5. **Seeds form a group.** Records equal in everything but the seed (the ``setting``
   column, [`lipnorm_exp.records.setting_key`][lipnorm_exp.records.setting_key]) are the runs of one
   hyper-parameter setting. Where a cell holds several settings (lr, hidden, heads, dropout, concat,
   and the depth where the cell does not fix it), the one with the best mean validation accuracy
   (``best_val_acc``, over its seeds that did not diverge) is chosen; ties go to the shallower
   model, then to the longer-trained one (``train.epochs``: the same seeds trained longer
   score at least as high on validation, so a tie says the extra epochs found no better one,
   and the number reported is the longer run's). Its test accuracy at the best validation
   epoch (``test_acc_at_best_val``) is reported as mean ± sample std over those seeds, in %,
   with their number (`select`); where the records' protocol says so, the last epoch's
   (``protocol.reported_epoch: final``) and ``np.std``'s (``protocol.std_ddof: 0``) instead.
   Beside it, the same runs' number at the other epoch, where every seed trained its full
   budget (a completed run of ``train.epochs`` epochs: `
   final_epoch`), and the validation accuracy at the epoch reported.
6. **Settings compete on equal seeds.** Only the settings run on the most seeds of the cell
   compete, compared on the seeds they all share (on each one's own where they share none): a
   setting run on fewer seeds was a screen (one seed at every depth, more at the depth it
   picked), and one lucky seed never outranks a mean over several, nor is a number over one seed
   reported where the cell has one over more. To let settings compete, give them the same seeds.
7. **Choosing apart from reporting.** Seeds below
   `REPORTING_SEEDS_FROM` (100) choose the setting; seeds
   from it on never do. Where the chosen setting has at least `HELD_OUT_SEEDS` such
   reporting seeds that ran (completed or diverged: a divergence is an outcome of those seeds,
   counted under rule 4, never a reason to go back to the choosing ones), the number is theirs
   (seeds that took no part in choosing it; ``†k`` with no number where they all diverged);
   else it is the choosing seeds', and the cell says so (``selected_on``: the seeds
   whose validation accuracy chose among several settings; ``held_out``: whether the number is
   over other seeds). Beside mean ± std, every cell gives the half-width of a 95% confidence
   interval of its mean (Student's t over its seeds, `Selection.ci95`).
"""

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pandas as pd
from scipy import stats

from lipnorm_exp.config import preset_names
from lipnorm_exp.config.schema import BEST_VAL_EPOCH, FINAL_EPOCH
from lipnorm_exp.records import DIVERGED, FINISHED
from lipnorm_exp.records.identity import REPORTING_SEEDS_FROM
from lipnorm_exp.report.cell_columns import MEAN, N_DIVERGED, STD, N
from lipnorm_exp.report.grids import PresetGrid, compose_grids, preset_grid
from lipnorm_exp.report.run_row import (
    BEST_VAL_ACC,
    DEPTH,
    EPOCHS,
    FINAL_TEST_ACC,
    FINAL_VAL_ACC,
    LABEL,
    PROTOCOL,
    REPORTED_EPOCH,
    RUN_ID,
    SCALE,
    SEED,
    SETTING,
    STATUS,
    STD_DDOF,
    TAGS,
    TEST_ACC_AT_BEST_VAL,
)

#: the column a setting is chosen by, and the one reported (rule 5)
VALIDATION = BEST_VAL_ACC
TEST = TEST_ACC_AT_BEST_VAL
#: the text of an empty cell
MISSING = "–"
#: the fewest reporting seeds run (rule 7, diverged ones included) for a number to be theirs
#: instead of the choosing seeds': the paper's five
HELD_OUT_SEEDS = 5


def report_groups(frame: pd.DataFrame, scale: str | None = None) -> list[tuple[str, str]]:
    """The ``(scale, protocol)`` pairs with records, each reported on its own.

    Only ``scale`` where given. ``paper`` comes first, then the other scales by name; the
    protocols of a scale by name.
    """
    pairs = set(zip(frame[SCALE], frame[PROTOCOL], strict=True))
    present = [(s, p) for s, p in pairs if pd.notna(s) and (scale is None or s == scale)]
    return sorted(present, key=lambda pair: (pair[0] != "paper", *pair))


def usable_runs(frame: pd.DataFrame, scale: str, protocol: str) -> pd.DataFrame:
    """The completed and diverged runs of ``scale`` and ``protocol`` (rules 1 and 4)."""
    keep = (frame[SCALE] == scale) & (frame[PROTOCOL] == protocol)
    return frame[keep & frame[STATUS].isin(FINISHED)].copy()


def finite(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that did not diverge: the only ones a mean is taken over (rule 4)."""
    return runs[runs[STATUS] != DIVERGED]


def tagged(runs: pd.DataFrame, preset: str) -> pd.DataFrame:
    """The runs whose ``config.tags`` name ``preset``."""
    return runs[runs[TAGS].map(lambda tags: preset in tags).astype(bool)]


def preset_runs(
    runs: pd.DataFrame, preset: str, scale: str, protocol: str
) -> tuple[pd.DataFrame, PresetGrid] | None:
    """The runs of ``preset`` (rule 2) and its grid, or ``None`` when it has none.

    Args:
        runs (pandas.DataFrame): usable runs of ``scale`` and ``protocol``.
        preset (str): the preset (its tag, and ``configs/experiment/<preset>.yaml``).
        scale (str): the scale of ``runs``.
        protocol (str): the protocol of ``runs``.

    Returns:
        tuple or None: the runs tagged with ``preset`` that its grid holds, and the grid
        (composed only when some run is tagged).
    """
    mine = tagged(runs, preset)
    if mine.empty:
        return None
    grid = preset_grid(preset, scale, protocol)
    mine = mine[grid.contains(mine)]
    return None if mine.empty else (mine, grid)


def compose_tagged_grids(frame: pd.DataFrame, scale: str | None = None) -> None:
    """Compose at once (`compose_grids`) the grids `preset_runs` may take for ``frame``.

    Those of each preset with a usable run tagged with it, at each scale (only ``scale`` where
    given) and protocol with records.
    """
    presets = set(preset_names())
    wanted = []
    for pair in report_groups(frame, scale):
        tags = usable_runs(frame, *pair)[TAGS].explode().dropna()
        wanted += [(preset, *pair) for preset in sorted(presets.intersection(tags))]
    compose_grids(wanted)


#: the last epoch's column of a column read at the best validation epoch
FINAL_OF = {VALIDATION: FINAL_VAL_ACC, TEST: FINAL_TEST_ACC}
#: ``protocol.reported_epoch``'s values: the best validation epoch's number, the last epoch's
BEST_VAL, FINAL = BEST_VAL_EPOCH, FINAL_EPOCH
#: the title of the number at the other epoch than the one reported (key: reported at the last)
OTHER_TITLES = {False: "final", True: "best val"}


@dataclass(frozen=True)
class Numbers:
    """Mean and std (in %) of one column over a selection's seeds that did not diverge.

    Args:
        mean (float): mean; ``NaN`` where no seed has a value.
        std (float): std with the selection's ``ddof``; ``NaN`` for too few seeds.
    """

    mean: float
    std: float

    def text(self) -> str:
        """``83.1 ± 0.5``, ``83.1`` (no std) or `MISSING` (no mean), one decimal."""
        if pd.isna(self.mean):
            return MISSING
        return f"{self.mean:.1f}" if pd.isna(self.std) else f"{self.mean:.1f} ± {self.std:.1f}"


@dataclass(frozen=True)
class Selection:
    """The runs (one per seed) of the setting chosen for a cell, and what they report.

    The number reported is ``report`` at the epoch the runs' protocol names
    (``protocol.reported_epoch``: the best validation epoch's, or the last epoch's, whose column
    is `FINAL_OF`'s), with the protocol's std convention (``protocol.std_ddof``).

    Args:
        runs (pandas.DataFrame): the chosen setting's records.
        report (str): the column reported at the best validation epoch (a fraction in [0, 1]).
        cell_runs (int): runs in the cell, over all settings.
        cell_diverged (int): diverged runs in the cell, over all settings.
        selected_on (tuple[int, ...]): the seeds whose validation accuracy chose the setting
            among several (empty: the cell held one setting, nothing was chosen).
        held_out (bool): whether ``runs`` are reporting seeds, none of which chose the setting.
    """

    runs: pd.DataFrame
    report: str
    cell_runs: int
    cell_diverged: int
    selected_on: tuple[int, ...] = ()
    held_out: bool = False

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds the number is over (diverged ones included)."""
        return tuple(int(seed) for seed in self.runs[SEED])

    @property
    def on_choosing_seeds(self) -> bool:
        """Whether the number is reported over seeds that chose its setting among several."""
        return bool(set(self.seeds) & set(self.selected_on))

    @property
    def standard_error(self) -> float:
        r"""The standard error (in %) of `mean`: $s / \sqrt{n}$.

        $s$ is the sample std of the number reported over the `n` seeds (whatever the
        protocol's ``ddof``); ``NaN`` for fewer than two seeds.
        """
        values = finite(self.runs)[self.column(self.at_final) or self.report]
        if len(values) < 2 or values.isna().any():
            return math.nan
        return float(100.0 * values.std(ddof=1) / math.sqrt(len(values)))

    @property
    def ci95(self) -> float:
        r"""Half-width (in %) of the 95% confidence interval of `mean`: Student's t.

        $t_{0.975,\,n-1}$ times `standard_error`; ``NaN`` for fewer than two seeds.
        """
        if math.isnan(error := self.standard_error):
            return math.nan
        return float(stats.t.ppf(0.975, self.n - 1) * error)

    @property
    def reported_epoch(self) -> str:
        """The protocol's epoch reported, `BEST_VAL` or `FINAL` (the setting's)."""
        return str(self.setting[REPORTED_EPOCH])

    @property
    def ddof(self) -> int:
        """The protocol's std convention: 1 (sample std) or 0 (``np.std``'s)."""
        return int(self.setting[STD_DDOF])

    @property
    def at_final(self) -> bool:
        """Whether the number reported is the last epoch's (the protocol's, where it has one)."""
        return self.reported_epoch == FINAL and self.report in FINAL_OF

    def column(self, final: bool) -> str | None:
        """The column of ``report`` at the last epoch (``final``) or at the best validation one.

        ``None`` for the last epoch of a column that has none (training accuracy).
        """
        return FINAL_OF.get(self.report) if final else self.report

    def numbers(self, column: str | None) -> Numbers:
        """Mean and std (in %, `ddof`) of ``column`` over the seeds that did not diverge.

        ``NaN`` where a seed lacks the value (a last epoch's number of a run that did not train
        its full budget: a mean over some seeds only is not reported), or for ``None``. No std
        of one seed, whatever the ``ddof`` (``np.std`` of one value is 0, which is no spread).
        """
        values = finite(self.runs)[column] if column else pd.Series(dtype=float)
        if values.empty or values.isna().any():
            return Numbers(math.nan, math.nan)
        std = values.std(ddof=self.ddof) if len(values) > 1 else math.nan
        return Numbers(100.0 * values.mean(), 100.0 * std)

    @property
    def headline(self) -> Numbers:
        """The number reported: `numbers` at the protocol's epoch."""
        return self.numbers(self.column(self.at_final))

    @property
    def other(self) -> Numbers:
        """The number at the other epoch (the last one for ``best_val``, and the reverse)."""
        return self.numbers(self.column(not self.at_final))

    @property
    def other_title(self) -> str:
        """What `other` is, as a column title: ``final`` or ``best val``."""
        return OTHER_TITLES[self.at_final]

    @property
    def best_val(self) -> Numbers:
        """``report`` at the best validation epoch."""
        return self.numbers(self.column(final=False))

    @property
    def final(self) -> Numbers:
        """``report`` at the last epoch (``NaN`` unless every seed trained its full budget)."""
        return self.numbers(self.column(final=True))

    @property
    def validation(self) -> Numbers:
        """Validation accuracy at the epoch the number reported is read at."""
        return self.numbers(FINAL_VAL_ACC if self.at_final else VALIDATION)

    @property
    def mean(self) -> float:
        """Mean of the number reported over the seeds that did not diverge, in %."""
        return self.headline.mean

    @property
    def std(self) -> float:
        """Std of `mean`'s values with the protocol's ``ddof``, in % (``NaN``: too few)."""
        return self.headline.std

    @property
    def n(self) -> int:
        """Number of seeds that did not diverge (those `mean` is over)."""
        return len(finite(self.runs))

    @property
    def n_diverged(self) -> int:
        """Diverged runs among the seeds."""
        return int((self.runs[STATUS] == DIVERGED).sum())

    @property
    def setting(self) -> pd.Series:
        """The chosen setting's config columns (those of its first seed)."""
        return self.runs.iloc[0]

    def text(self, show_depth: bool = False, show_n: bool = True) -> str:
        """The cell, ``83.1 ± 0.5 (5) n=2 †1`` or ``†3``: `format_cell` of this selection.

        ``show_n=False`` leaves ``n=k`` out (a table that states the seeds in its notes).
        """
        depth = int(self.setting[DEPTH]) if show_depth else None
        return format_cell(self.mean, self.std, self.n, depth, self.n_diverged, show_n)


def format_cell(
    mean: float,
    std: float,
    n: int,
    depth: int | None = None,
    diverged: int = 0,
    show_n: bool = True,
) -> str:
    """``mean ± std (depth) n=seeds †diverged``, one decimal, as the paper prints a cell.

    ``n`` counts the seeds the mean is over; ``diverged`` those beside them. No ``±`` where
    ``std`` is NaN (one seed), no ``(depth)`` for ``None``, no ``n=`` without ``show_n``, no
    ``†`` for 0, only ``†k`` where no seed is left (``n`` is 0), and `MISSING` for a NaN
    ``mean`` of seeds that did not diverge (a last epoch's number of runs stopped early).
    """
    if not n:
        return f"†{diverged}"
    text = Numbers(mean, std).text()
    if pd.isna(mean):
        return text
    if depth is not None:
        text += f" ({depth})"
    if show_n:
        text += f" n={n}"
    return f"{text} †{diverged}" if diverged else text


#: the column of `setting_scores`: a setting's mean ``select_by`` over its runs that did not
#: diverge (rule 4)
SCORE: Final = "score"


def setting_scores(runs: pd.DataFrame, select_by: str = VALIDATION) -> pd.DataFrame:
    """A row per setting of ``runs``: its `SCORE`, least depth and most epochs, best first.

    The order is rule 5's: the best mean ``select_by`` over the setting's runs that did not
    diverge (``NaN`` where they all did: last), then the shallower, then the longer-trained,
    then the setting key (a fixed order for exact ties). `select` takes the first row of the
    settings that compete (rule 6).

    Args:
        runs (pandas.DataFrame): runs of one cell (usable rows of the report's frame).
        select_by (str, optional): the column whose mean ranks the settings.
            (default: ``best_val_acc``)

    Returns:
        pandas.DataFrame: columns ``setting``, `SCORE`, ``depth`` and ``epochs``.
    """
    score = runs[select_by].where(runs[STATUS] != DIVERGED)
    scores = (
        runs.assign(**{SCORE: score})
        .groupby(SETTING)
        .agg(**{SCORE: (SCORE, "mean"), DEPTH: (DEPTH, "min"), EPOCHS: (EPOCHS, "max")})
    )
    return scores.reset_index().sort_values(
        [SCORE, DEPTH, EPOCHS, SETTING],
        ascending=[False, True, False, True],
        na_position="last",
        ignore_index=True,
    )


def select(runs: pd.DataFrame, report: str = TEST, select_by: str = VALIDATION) -> Selection | None:
    """Pick the setting of ``runs`` with the best mean ``select_by`` (module rules 5 and 6).

    Args:
        runs (pandas.DataFrame): the usable runs of one cell.
        report (str, optional): the column to report. (default: ``test_acc_at_best_val``)
        select_by (str, optional): the column whose mean over seeds picks the setting.
            (default: ``best_val_acc``)

    Returns:
        Selection or None: ``None`` when ``runs`` is empty.
    """
    if runs.empty:
        return None
    reporting = runs[SEED] >= REPORTING_SEEDS_FROM
    choosing = runs[~reporting] if (~reporting).any() else runs
    seeds = choosing.groupby(SETTING)[SEED].transform("nunique")
    competing = choosing[seeds == seeds.max()]
    shared = set.intersection(*(set(group[SEED]) for _, group in competing.groupby(SETTING)))
    compared = competing[competing[SEED].isin(shared)] if shared else competing
    setting = setting_scores(compared, select_by)[SETTING].iloc[0]
    several = choosing[SETTING].nunique() > 1
    selected_on = tuple(sorted(int(seed) for seed in compared[SEED].unique())) if several else ()
    chosen = runs[runs[SETTING] == setting]
    held_out = chosen[chosen[SEED] >= REPORTING_SEEDS_FROM]
    enough = len(held_out) >= HELD_OUT_SEEDS and (~reporting).any()
    reported = held_out if enough else chosen[chosen[SEED] < REPORTING_SEEDS_FROM]
    if reported.empty:  # reporting seeds alone: they chose too
        reported = chosen
    diverged = int((runs[STATUS] == DIVERGED).sum())
    return Selection(
        reported.sort_values([SEED, RUN_ID]),
        report,
        cell_runs=len(runs),
        cell_diverged=diverged,
        selected_on=selected_on,
        held_out=bool(enough),
    )


def select_group(runs: pd.DataFrame, report: str = TEST, select_by: str = VALIDATION) -> Selection:
    """`select` of runs known to be there (a group of a ``groupby``, say)."""
    chosen = select(runs, report, select_by)
    assert chosen is not None, "a group of runs holds one at least"
    return chosen


def epoch_rule(selections: Sequence[Selection]) -> str:
    """The rule of the numbers of ``selections``, as a caption says it.

    ``best-validation epoch, mean ± sample std``; ``last epoch, mean ± std (ddof 0)``; both
    parts, joined, where the selections follow two protocols.
    """
    rules = sorted({(chosen.at_final, chosen.ddof) for chosen in selections})
    return "; ".join(
        f"{'last' if final else 'best-validation'} epoch, mean ± {std_name(ddof)}"
        for final, ddof in rules
    )


def std_name(ddof: int) -> str:
    """``sample std`` (``ddof`` 1) or ``std (ddof 0)``: a std convention in words."""
    return "sample std" if ddof == 1 else f"std (ddof {ddof})"


#: decimals of a number in % in a CSV file (the tables print one)
CSV_DECIMALS = 2


def cell_numbers(chosen: Selection | None) -> dict[str, float | int | str]:
    """A cell's numbers for a CSV row, in % rounded to `CSV_DECIMALS`.

    ``mean`` and ``std`` (the number reported), ``val_mean`` and ``val_std`` (validation
    accuracy at the same epoch), ``best_val_mean``/``std`` and ``final_mean``/``std`` (the
    reported column at the best validation epoch and at the last one), ``n``, ``n_diverged``,
    ``reported_epoch`` and ``std_ddof``; ``ci95`` (`Selection.ci95`), ``seeds`` (those
    reported), ``selected_on`` (those that chose the setting) and ``held_out`` (rule 7). An
    empty cell (``None``) has NaN numbers and no seeds.
    """
    names = ("", "val_", "best_val_", "final_")
    if chosen is None:
        empty = {f"{name}{part}": math.nan for name in names for part in (MEAN, STD)}
        return {
            **empty,
            N: 0,
            N_DIVERGED: 0,
            REPORTED_EPOCH: "",
            STD_DDOF: math.nan,
            "ci95": math.nan,
            "seeds": "",
            "selected_on": "",
            "held_out": False,
        }
    numbers = (chosen.headline, chosen.validation, chosen.best_val, chosen.final)
    cell: dict[str, float | int | str] = {}
    for name, pair in zip(names, numbers, strict=True):
        cell[f"{name}{MEAN}"] = round(pair.mean, CSV_DECIMALS)
        cell[f"{name}{STD}"] = round(pair.std, CSV_DECIMALS)
    cell.update({N: chosen.n, N_DIVERGED: chosen.n_diverged})
    cell.update({REPORTED_EPOCH: chosen.reported_epoch, STD_DDOF: chosen.ddof})
    cell.update(ci95=round(chosen.ci95, CSV_DECIMALS), seeds=compact(chosen.seeds))
    cell.update(selected_on=compact(chosen.selected_on), held_out=chosen.held_out)
    return cell


def compact(values: Sequence[int]) -> str:
    """Integers as text, three or more consecutive ones as a range: ``1–20``, ``2, 5, 10``."""
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    parts = [
        [f"{run[0]}–{run[-1]}"] if len(run) >= 3 else [str(value) for value in run] for run in runs
    ]
    return ", ".join(part for group in parts for part in group)


#: the columns of a point of `curves` besides its label and numbers: its x value, its `Selection`
X: Final = "x"
SELECTION: Final = "selection"


def curves(
    runs: pd.DataFrame, x: str, report: str = TEST, select_by: str = VALIDATION
) -> pd.DataFrame:
    """One `select` per (model label, value of ``x``): the points of a figure's lines.

    Returns:
        pandas.DataFrame: columns ``label``, `X` (``x``'s value), `MEAN` and `STD` (in %), `N`,
        `N_DIVERGED` and `SELECTION` (the `Selection`), sorted by label and ``x``.
    """
    points = []
    for (label, value), group in runs.groupby([LABEL, x], sort=True):
        chosen = select_group(group, report, select_by)
        points.append((label, value, chosen.mean, chosen.std, chosen.n, chosen.n_diverged, chosen))
    return pd.DataFrame(points, columns=[LABEL, X, MEAN, STD, N, N_DIVERGED, SELECTION])


@dataclass(frozen=True)
class HyperSetting:
    """The runs of one setting of a preset's search keys.

    Figs. 2 and 3 draw each setting apart; the scorecard checks their claims at each.

    Args:
        text (str): the values, ``dropout 0.6, lr 0.005``.
        own (bool): whether they are the preset's own (`PresetGrid.sets`).
        runs (pandas.DataFrame): the runs.
        keys (tuple[str, ...]): the keys the text names, ``("dropout", "lr")``.
    """

    text: str
    own: bool
    runs: pd.DataFrame
    keys: tuple[str, ...]

    @property
    def title(self) -> str:
        """The text, marked where the settings are the preset's own."""
        return f"{self.text} (the preset's values)" if self.own else self.text


def number_text(value: float) -> str:
    """``3`` for 3.0, ``0.005`` for 0.005: a number as a legend or a caption writes it."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _value_text(value) -> str:
    """A value as the config writes it: ``0.005``, ``3``, ``true``, ``null``, ``relu``."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return number_text(value) if isinstance(value, (int, float)) else str(value)


def hyper_settings(runs: pd.DataFrame, grid: PresetGrid) -> list[HyperSetting]:
    """``runs`` apart per setting of ``grid.hyper_keys``, the preset's own first.

    A setting's text names the keys whose values differ between the settings (every key a search
    config sweeps where there is one setting), by the last part of their name (``model.dropout``:
    dropout).
    """
    values = [grid.hyper_parameters(run) for _, run in runs.iterrows()]
    groups = {v: runs[[value == v for value in values]] for v in dict.fromkeys(values)}
    own = {v: all(grid.sets(run) for _, run in group.iterrows()) for v, group in groups.items()}
    keys = grid.hyper_keys
    differ = [i for i in range(len(keys)) if len({v[i] for v in groups}) > 1] or [
        i for i, key in enumerate(keys) if key in grid.search_keys
    ]
    names = tuple(keys[i].rsplit(".", 1)[-1] for i in differ)

    def text(setting: tuple) -> str:
        return ", ".join(
            f"{name} {_value_text(setting[i])}" for name, i in zip(names, differ, strict=True)
        )

    found = sorted(groups, key=lambda v: (not own[v], repr(v)))
    return [HyperSetting(text(v), own[v], groups[v], names) for v in found]


__all__ = [
    "BEST_VAL",
    "CSV_DECIMALS",
    "FINAL",
    "FINAL_OF",
    "MISSING",
    "Numbers",
    "OTHER_TITLES",
    "HELD_OUT_SEEDS",
    "SELECTION",
    "X",
    "HyperSetting",
    "Selection",
    "cell_numbers",
    "compact",
    "compose_tagged_grids",
    "curves",
    "epoch_rule",
    "finite",
    "format_cell",
    "hyper_settings",
    "number_text",
    "preset_runs",
    "report_groups",
    "select",
    "select_group",
    "std_name",
    "tagged",
    "usable_runs",
]
