"""One line of the reproduction scorecard, its verdicts, and what a line says of its runs.

A line is a published number (a cell of Tables 1–3, a value of Fig. 5) or a claim the paper's
text makes about a figure, ours beside the paper's, with one of these verdicts:

- ``reproduced``: a number within ± max(the paper's std, 2 points) of the paper's
  (`number_verdict`);
- ``differs``: a number outside that range; the line names where its runs depart from the
  paper's setup (fewer epochs: whether a seed was still improving, its best validation epoch in
  the second half of its run), and where it chose another depth than the paper's, or other
  values than the preset's in a search, our number at the paper's depth (with its setting where
  that is not the preset's) and at the preset's values (`departures`);
- ``holds`` / ``fails``: a claim, checked by the rule its line states;
- a number's verdict is **provisional** where it rests on fewer than
  `HELD_OUT_SEEDS` seeds, or on the seeds that chose its
  setting among several (a choice on validation favours the seeds that made it), or where its
  mean lies within one standard error of the band's edge (the paper's number ± max(std, 2
  points)) over fewer than `SETTLED_SEEDS` seeds (more seeds could flip it): the line says
  so, and its number gives the 95% confidence interval of its mean (`provisional`);
- ``not run``: no record for it, and why (`not_run_reason`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import pandas as pd

from lipnorm_exp.records import DIVERGED
from lipnorm_exp.records.identity import REPORTING_SEEDS_FROM
from lipnorm_exp.report import published_numbers
from lipnorm_exp.report.aggregate import (
    HELD_OUT_SEEDS,
    HyperSetting,
    Selection,
    compact,
    select_group,
)
from lipnorm_exp.report.grids import Budget
from lipnorm_exp.report.run_row import (
    BEST_EPOCH,
    DATASET,
    DEPTH,
    EPOCHS,
    EPOCHS_RUN,
    RUN_ID,
    SEED,
    SETTING,
    STATUS,
)
from lipnorm_exp.report.used_runs import early_stop

REPRODUCED = "reproduced"
DIFFERS = "differs"
HOLDS = "holds"
FAILS = "fails"
NOT_RUN = "not run"
#: a number whose every seed diverged: nothing to compare, and the runs say why (†)
DIVERGED_ALL = "diverged"
#: every verdict, in the order the scorecard counts them
VERDICTS = (REPRODUCED, HOLDS, DIFFERS, FAILS, DIVERGED_ALL, NOT_RUN)
#: the least distance, in points of accuracy, that counts as a difference
TOLERANCE_POINTS = 2.0
#: the seeds over which a mean within one standard error of the band's edge stands as it is
SETTLED_SEEDS = 10


@dataclass(frozen=True)
class LineNumbers:
    """A published number's line in numbers (in %), for the scorecard's numeric CSV columns.

    Args:
        paper_mean (float): the paper's mean.
        paper_std (float or None): the paper's std, where it gives one.
        ours_mean (float): our mean over the line's seeds (NaN: none has a value).
        ours_std (float): our std (NaN for too few seeds).
        n (int): our seeds.
        final_mean (float): our mean of the last epoch's number (NaN where a seed did not
            train its full budget).
        final_std (float): its std.
    """

    paper_mean: float
    paper_std: float | None
    ours_mean: float
    ours_std: float
    n: int
    final_mean: float
    final_std: float


@dataclass(frozen=True)
class ScoreLine:
    """One line of the scorecard.

    Args:
        item (str): what of the paper it checks: ``Table 3``, ``Fig. 2``, ...
        subject (str): the cell (``GAT-Lip, Cora 15 layers``) or the claim.
        paper (str): the published value, or what the paper's text says.
        ours (str): our value, or what the records show.
        verdict (str): one of `VERDICTS`.
        why (str): the cause of a difference or failure, why the line was not run, or (a
            figure claim) the setting it was checked at and the claim at the other settings run.
        protocol (str): the protocol of the runs.
        epochs (str): their epochs (``1000``, ``150–1000``); passes for TREES.
        seeds (str): their seeds.
        runs (tuple[str, ...]): the run ids the line rests on (records ``<run_id>.json``).
        numbers (LineNumbers or None): a published number's line in numbers; ``None`` for a
            claim or a line not run.
        provisional (bool): whether the verdict is provisional (`provisional`; ``why`` says
            why).
        rule (str): the rule a claim is checked by (``every seed's best training accuracy ≥
            50%``); ``""`` for a number, whose rule is `number_verdict`'s.
    """

    item: str
    subject: str
    paper: str
    ours: str
    verdict: str
    why: str = ""
    protocol: str = ""
    epochs: str = ""
    seeds: str = ""
    runs: tuple[str, ...] = ()
    numbers: LineNumbers | None = None
    provisional: bool = False
    rule: str = ""


def tolerance(published: published_numbers.PaperValue) -> float:
    """The band's half-width around ``published``: max(its std, `TOLERANCE_POINTS`)."""
    return max(published.std or 0.0, TOLERANCE_POINTS)


def number_verdict(ours: float, published: published_numbers.PaperValue) -> str:
    """``reproduced`` within ± `tolerance` of ``published``, ``differs`` outside."""
    return REPRODUCED if abs(ours - published.mean) <= tolerance(published) else DIFFERS


def edge_distance(chosen: Selection, published: published_numbers.PaperValue) -> float:
    """How many standard errors ``chosen``'s mean lies from the band's nearer edge (NaN: none).

    Positive outside the band (``differs``), negative inside (``reproduced``).
    """
    return (abs(chosen.mean - published.mean) - tolerance(published)) / chosen.standard_error


def provisional(chosen: Selection, published: published_numbers.PaperValue) -> str:
    """Why the verdict on ``chosen``'s number is provisional, or ``""`` where it is not."""
    if chosen.on_choosing_seeds:
        return (
            f"provisional: reported over seeds {compact(chosen.seeds)}, which chose its setting "
            f"among several (seeds {compact(chosen.selected_on)})"
        )
    if chosen.n < HELD_OUT_SEEDS:
        return f"provisional: over {chosen.n} seeds, fewer than {HELD_OUT_SEEDS}"
    distance = edge_distance(chosen, published)
    if abs(distance) < 1 and chosen.n < SETTLED_SEEDS:
        return (
            f"provisional: its mean lies {abs(distance):.2f} standard errors "
            f"{'outside' if distance > 0 else 'inside'} the band's edge, over {chosen.n} seeds "
            f"(fewer than {SETTLED_SEEDS}: more seeds could flip it)"
        )
    return ""


def _integers(values: pd.Series) -> str:
    return compact(tuple(sorted({int(value) for value in values.dropna()})))


class RunFacts(TypedDict):
    """The fields of a `ScoreLine` that say which runs it rests on (`run_facts`)."""

    protocol: str
    epochs: str
    seeds: str
    runs: tuple[str, ...]


def run_facts(runs: pd.DataFrame, protocol: str, epochs: pd.Series | None = None) -> RunFacts:
    """The `RunFacts` of a line resting on ``runs``, their ``protocol``.

    Its ``epochs`` are those of ``epochs`` where given (TREES: passes), else the runs' epochs.
    """
    return {
        "protocol": protocol,
        "epochs": _integers(runs[EPOCHS] if epochs is None else epochs),
        "seeds": _integers(runs[SEED]),
        "runs": tuple(sorted(runs[RUN_ID])),
    }


def _still_improving(chosen: pd.DataFrame) -> str:
    """Whether a seed's best validation epoch came in the second half of the epochs it ran."""
    ran = chosen.dropna(subset=[BEST_EPOCH])
    best = _integers(ran[BEST_EPOCH])
    if (ran[BEST_EPOCH] > ran[EPOCHS_RUN] / 2).any():
        return f"still improving: best epochs {best}"
    return f"none improved in the second half of its run: best epochs {best}"


def _at(selection: Selection, settings: Sequence[HyperSetting]) -> str:
    """`` at dropout 0, lr 0.001`` where ``selection`` is not at the preset's own values."""
    for setting in settings:
        if selection.runs[RUN_ID].isin(setting.runs[RUN_ID]).any():
            return "" if setting.own else f" at {setting.text}"
    return ""


def departures(
    chosen: pd.DataFrame,
    candidates: pd.DataFrame,
    depth: int | None,
    budget: Budget,
    settings: Sequence[HyperSetting] = (),
) -> str:
    """Where the runs behind a number depart from the paper's setup, as the records say.

    Args:
        chosen (pandas.DataFrame): the seeds of the setting reported.
        candidates (pandas.DataFrame): every run of the cell (for the depths tried).
        depth (int or None): the paper's chosen depth, where the cell chooses one.
        budget (Budget): the paper's epochs and seeds, those of the number's preset
            (`paper_budget`).
        settings (Sequence[HyperSetting]): the cell's runs per setting of the preset's search
            keys (`hyper_settings`), the preset's own first.
            Where another setting was chosen, ours at the preset's own values is named; where
            the number is over reporting seeds (100 on), what the seeds that chose its setting
            gave is named too; the
            settings run on fewer seeds than the number's, which the selection does not compare
            with it, are counted.
    """
    found = []
    epochs = int(chosen[EPOCHS].max())
    if epochs < budget.epochs:
        found.append(f"{epochs} of the paper's {budget.epochs} epochs ({_still_improving(chosen)})")
    stop = early_stop(chosen)
    if stop:
        found.append(stop)
    if len(chosen) < budget.seeds:
        found.append(f"{len(chosen)} of the paper's {budget.seeds} seeds")
    diverged = int((chosen[STATUS] == DIVERGED).sum())
    if diverged:
        found.append(f"{diverged} seeds diverged")
    ran = set(candidates[DEPTH].astype(int))
    if depth is not None and depth not in ran:
        found.append(f"the paper's depth {depth} not run (ran {_integers(candidates[DEPTH])})")
    elif depth is not None and int(chosen[DEPTH].iloc[0]) != depth:
        at_depth = select_group(candidates[candidates[DEPTH].astype(int) == depth])
        found.append(f"at the paper's depth {depth}: {at_depth.text()}{_at(at_depth, settings)}")
    choosing = candidates[
        (candidates[SETTING] == chosen[SETTING].iloc[0]) & (candidates[SEED] < REPORTING_SEEDS_FROM)
    ]
    if (chosen[SEED] >= REPORTING_SEEDS_FROM).all() and not choosing.empty:
        found.append(
            f"over seeds {_integers(chosen[SEED])}, which chose nothing; the seeds "
            f"{_integers(choosing[SEED])} that chose its setting gave "
            f"{select_group(choosing).text()}"
        )
    own = settings[0] if settings and settings[0].own else None
    if own is not None and not chosen[RUN_ID].isin(own.runs[RUN_ID]).any():
        at_own = select_group(own.runs)
        where = f"{_integers(at_own.runs[EPOCHS])} epochs"
        if own.runs[DEPTH].nunique() > 1:
            where += (
                f"; {int(at_own.setting[DEPTH])} layers, the depth best on validation of "
                f"{_integers(own.runs[DEPTH])}"
            )
        found.append(f"at the preset's values ({own.text}; {where}): {at_own.text()}")
    seeds = chosen[SEED].nunique()
    fewer = [s for s in settings if s is not own and s.runs[SEED].nunique() < seeds]
    if fewer:
        screened = pd.concat([setting.runs for setting in fewer])[SEED]
        what = "setting" if len(fewer) == 1 else "settings"
        on = "seed" if screened.nunique() == 1 else "seeds"
        found.append(
            f"{len(fewer)} other {what} of {', '.join(fewer[0].keys)} run on {on} "
            f"{_integers(screened)}: fewer than the {seeds} seeds reported, so not compared"
        )
    if candidates[SETTING].nunique() == 1:
        found.append("no hyper-parameter search (the paper searched lr, width, heads, dropout)")
    return "; ".join(found)


def not_run_reason(frame: pd.DataFrame, dataset: str | None) -> str:
    """Why a line has no records: ``data absent`` or ``compute``.

    ``data absent`` when no record of ``dataset`` exists at all (its raw files were not on the
    machines that made the records), else ``compute``.
    """
    if dataset is not None and not (frame[DATASET] == dataset).any():
        return f"data absent: no record of {dataset} at any scale or protocol"
    return "compute: no run of it yet"


__all__ = [
    "DIFFERS",
    "FAILS",
    "HOLDS",
    "NOT_RUN",
    "REPRODUCED",
    "SETTLED_SEEDS",
    "TOLERANCE_POINTS",
    "VERDICTS",
    "LineNumbers",
    "RunFacts",
    "ScoreLine",
    "departures",
    "not_run_reason",
    "number_verdict",
    "run_facts",
]
