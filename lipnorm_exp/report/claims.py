"""The claims the paper's text makes about Figs. 2, 3, 5 and 6, checked on the records.

Each is checked by a rule its scorecard line states (`ScoreLine.rule`):

- Fig. 2 (§6, preset ``gradients``): a 20-layer GAT's attention gradients reach the order of
  `GAT_GRADIENT_PEAK` within 100 epochs on Cora; with
  LipschitzNorm they stay bounded.
- Fig. 3 (§6, preset ``gradients``): a 30-layer GAT's training accuracy does not improve;
  GAT-Lip trains at every depth of the figure.
- Fig. 5 (§7.2, preset ``trees``): at tree depth 10 GAT-Lip reaches 68.3% training accuracy,
  GAT-PN 47.8%, every other model < 25%, so GAT-Lip is the best; GAT and GGNN behave better
  with depth than GCN and GIN.
- Fig. 6 (§7.3, preset ``depth``): with LipschitzNorm GAT and GT keep learning beyond 15
  layers where they fail without it, and LipschitzNorm beats PairNorm and LayerNorm.

Each function takes the usable runs of its preset (or ``None``: no run), the preset's grid (or
``None``), their protocol, and ``why(dataset)``, the reason a line about that dataset was not
run, and returns lines. A claim names a model by its configuration (`ModelConfig`) and takes the
label, which the runs carry, from it when its lines are made: a renamed label changes a line's text,
never its verdict, and a configuration that no label maps to raises a `ConfigError` rather than
reading as not run.
"""

from collections.abc import Callable

import numpy as np
import pandas as pd

from lipnorm_exp.records import schema
from lipnorm_exp.records.labels import ModelConfig, dataset_label
from lipnorm_exp.records.schema import EpochRow
from lipnorm_exp.report import published_numbers
from lipnorm_exp.report.aggregate import hyper_settings, select, select_group
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.run_row import (
    BEST_TRAIN_ACC,
    DATASET,
    DEPTH,
    EPOCHS_RUN,
    HISTORY,
    LABEL,
    PASSES_PER_EPOCH,
    RUN_ID,
    SEED,
    TREE_DEPTH,
)
from lipnorm_exp.report.verdicts import (
    FAILS,
    HOLDS,
    NOT_RUN,
    RunFacts,
    ScoreLine,
    number_verdict,
    run_facts,
)

#: the models the claims name, by configuration
GAT, GAT_LIP, GAT_PN = (
    ModelConfig("gat"),
    ModelConfig("gat", "lip"),
    ModelConfig("gat", "pairnorm"),
)
GGNN, GCN, GIN = ModelConfig("ggnn"), ModelConfig("gcn"), ModelConfig("gin")
#: Fig. 2: the depth and epochs the paper shows
GRADIENT_DEPTH, GRADIENT_EPOCHS = 20, 100
#: Fig. 2: "the order of 1e8": a peak at least one order of magnitude below it still counts
ORDER_OF = 10.0
#: Fig. 2: LipschitzNorm's gradients "remain stable": every peak below this norm
BOUNDED = 1.0
#: Fig. 3: "a total lack of improvement": best training accuracy within this many points of
#: the first epoch's
NO_IMPROVEMENT_POINTS = 5.0
#: Fig. 3: "proper training": a best training accuracy of at least this (%)
TRAINS_PERCENT = 50.0
#: Fig. 6: "fail to converge" without LipschitzNorm: at least this many points below it
FAILS_BY_POINTS = 10.0
#: Fig. 6: beyond this depth the unnormalised models fail (the paper's l > 15)
DEEP = 15


Check = Callable[[list], tuple[str, bool]]


def _setting_lines(
    item: str,
    subject: str,
    rule: str,
    claim: str,
    check: Check,
    runs: pd.DataFrame,
    grid: PresetGrid,
    protocol: str,
    chosen: pd.DataFrame,
) -> list[ScoreLine]:
    """A figure claim's verdicts: at the setting chosen on validation, and at the paper's own.

    ``check(histories)`` gives the values of one setting's seeds and whether the claim holds on
    them (by ``rule``, which each line states). ``runs`` are those of the claim's model and depth;
    ``chosen`` the seeds of the setting `select` picks among them. The first line is at that
    setting; the second at the preset's own values (the paper's, `PresetGrid.sets`) where the
    chosen setting is another one and the own one was run. Each line's *why* names its setting
    and gives the claim at every setting that has no line of its own (`hyper_settings`).
    """
    settings = hyper_settings(runs, grid)
    [kept] = [s for s in settings if s.runs[RUN_ID].isin(chosen[RUN_ID]).any()]
    own = [s for s in settings if s.own and s is not kept]
    shown = [
        (kept, chosen, "at the setting chosen on validation"),
        *((s, s.runs, "at the paper's own setting") for s in own),
    ]
    others = [s for s in settings if all(s is not line[0] for line in shown)]
    elsewhere = []
    for setting in others:
        values, holds = check(list(setting.runs.sort_values([SEED, RUN_ID])[HISTORY]))
        elsewhere.append(f"at {setting.text}: {HOLDS if holds else FAILS} ({values})")
    other_runs = tuple(sorted(rid for s in others for rid in s.runs[RUN_ID]))
    lines = []
    for setting, seeds, where in shown:
        ours, holds = check(list(seeds.sort_values([SEED, RUN_ID])[HISTORY]))
        named = f"{where} ({setting.text})"
        facts = run_facts(seeds, protocol)
        facts["runs"] += other_runs
        why = "; ".join([named, *elsewhere]) if len(settings) > 1 else ""
        verdict = HOLDS if holds else FAILS
        title = f"{subject}, {where}" if own else subject
        lines.append(ScoreLine(item, title, claim, ours, verdict, why, **facts, rule=rule))
    return lines


def _at_depth(runs: pd.DataFrame, label: str, depth: int) -> pd.DataFrame:
    """The runs of ``label`` at ``depth`` layers."""
    return runs[(runs[LABEL] == label) & (runs[DEPTH] == depth)]


def _chosen(runs: pd.DataFrame | None, label: str, depth: int) -> pd.DataFrame:
    """The seeds of the setting `select` picks among ``runs`` of ``label`` at ``depth`` layers.

    Empty where there are none.
    """
    chosen = None if runs is None else select(_at_depth(runs, label, depth))
    return chosen.runs if chosen else pd.DataFrame()


def _peak(history: list[EpochRow], epochs: int) -> float:
    """The largest attention-gradient norm of any layer within the first ``epochs`` epochs."""
    norms = [max(row[schema.GRAD_ATTN]) for row in history[:epochs] if schema.GRAD_ATTN in row]
    return max(norms) if norms else np.nan


def _with_gradients(runs: pd.DataFrame | None) -> pd.DataFrame | None:
    if runs is None:
        return None
    tracked = runs[runs[HISTORY].map(lambda h: any(schema.GRAD_ATTN in row for row in h))]
    return tracked if len(tracked) else None


Why = Callable[[str], str]


def fig2_lines(
    runs: pd.DataFrame | None, grid: PresetGrid | None, protocol: str, why: Why
) -> list[ScoreLine]:
    """Fig. 2's two claims, on the ``gradients`` preset's runs at 20 layers."""
    runs = _with_gradients(runs)
    item, depth, epochs = "Fig. 2", GRADIENT_DEPTH, GRADIENT_EPOCHS
    floor = published_numbers.GAT_GRADIENT_PEAK / ORDER_OF
    gat, gat_lip = GAT.label, GAT_LIP.label
    checks = (
        (
            gat,
            f"{gat}, {depth} layers, Cora: attention gradients reach the order of "
            f"{published_numbers.GAT_GRADIENT_PEAK:.0e} within {epochs} epochs",
            f"every seed's largest attention-gradient norm ≥ {floor:.0e}",
            f"~{published_numbers.GAT_GRADIENT_PEAK:.0e}",
            lambda peak: peak >= floor,
        ),
        (
            gat_lip,
            f"{gat_lip}, {depth} layers, Cora: attention gradients stay bounded",
            f"every seed's largest attention-gradient norm within {epochs} epochs < {BOUNDED:g}",
            "stable",
            lambda peak: peak < BOUNDED,
        ),
    )
    lines = []
    for label, subject, rule, claim, meets in checks:
        chosen = _chosen(runs, label, depth)
        if chosen.empty:
            not_run = ScoreLine(
                item, subject, claim, "–", NOT_RUN, why("cora"), protocol, rule=rule
            )
            lines.append(not_run)
            continue

        def check(histories: list, meets=meets) -> tuple[str, bool]:
            peaks = [_peak(history, epochs) for history in histories]
            return ", ".join(f"{peak:.2g}" for peak in peaks), all(meets(p) for p in peaks)

        assert runs is not None and grid is not None, "runs come with their preset's grid"
        same = _at_depth(runs, label, depth)
        lines += _setting_lines(item, subject, rule, claim, check, same, grid, protocol, chosen)
    return lines


def _train_accuracy(history: list[EpochRow]) -> tuple[float, float]:
    """First-epoch and best training accuracy of a run, in %."""
    accuracies = [100.0 * row[schema.TRAIN_ACC] for row in history]
    return accuracies[0], max(accuracies)


def fig3_lines(
    runs: pd.DataFrame | None, grid: PresetGrid | None, protocol: str, why: Why
) -> list[ScoreLine]:
    """Fig. 3's claims: no progress for GAT at 30 layers; GAT-Lip trains at 20 and 30."""
    runs = _with_gradients(runs)
    item = "Fig. 3"
    gat, gat_lip = GAT.label, GAT_LIP.label
    checks = [
        (
            gat,
            30,
            f"{gat}, 30 layers, Cora: no improvement of the training accuracy",
            f"every seed's best within {NO_IMPROVEMENT_POINTS:g} points of its first epoch's",
            "no improvement",
            lambda first, best: best - first <= NO_IMPROVEMENT_POINTS,
        ),
        *(
            (
                gat_lip,
                depth,
                f"{gat_lip}, {depth} layers, Cora: trains properly",
                f"every seed's best training accuracy ≥ {TRAINS_PERCENT:g}%",
                "trains",
                lambda first, best: best >= TRAINS_PERCENT,
            )
            for depth in (20, 30)
        ),
    ]
    lines = []
    for label, depth, subject, rule, claim, meets in checks:
        chosen = _chosen(runs, label, depth)
        if chosen.empty:
            not_run = ScoreLine(
                item, subject, claim, "–", NOT_RUN, why("cora"), protocol, rule=rule
            )
            lines.append(not_run)
            continue

        def check(histories: list, meets=meets) -> tuple[str, bool]:
            pairs = [_train_accuracy(history) for history in histories]
            values = ", ".join(f"{first:.1f} → {best:.1f}" for first, best in pairs)
            return values, all(meets(first, best) for first, best in pairs)

        assert runs is not None and grid is not None, "runs come with their preset's grid"
        same = _at_depth(runs, label, depth)
        lines += _setting_lines(item, subject, rule, claim, check, same, grid, protocol, chosen)
    return lines


def _checked(
    item: str,
    subject: str,
    rule: str,
    claim: str,
    found: tuple[list[str], list[str], list[pd.DataFrame]],
    why: str,
    facts: Callable[[pd.DataFrame], RunFacts],
) -> ScoreLine:
    """The line of a claim checked case by case.

    Args:
        item: the figure.
        subject: the claim.
        rule: the rule it is checked by.
        claim: what the paper says.
        found: what each case showed, the cases where the rule failed, and the runs used.
        why: the reason the line was not run, where no case had records.
        facts: the `run_facts` of the runs used.
    """
    shown, failures, used = found
    if not shown:
        return ScoreLine(item, subject, claim, "–", NOT_RUN, why, rule=rule)
    reason = f"fails for {', '.join(failures)}" if failures else ""
    verdict = FAILS if failures else HOLDS
    ours = "; ".join(shown)
    return ScoreLine(
        item, subject, claim, ours, verdict, reason, **facts(pd.concat(used)), rule=rule
    )


def _trees_facts(runs: pd.DataFrame, protocol: str) -> RunFacts:
    """The `run_facts` of TREES runs, whose epochs are passes over the training trees."""
    return run_facts(runs, protocol, runs[EPOCHS_RUN] * runs[PASSES_PER_EPOCH])


def fig5_lines(
    runs: pd.DataFrame | None, grid: PresetGrid | None, protocol: str, why: Why
) -> list[ScoreLine]:
    """Fig. 5's values at depth 10 and its two claims about models and depth."""
    item, depth, train = "Fig. 5", published_numbers.TREES_DEPTH, BEST_TRAIN_ACC
    reason = why("trees")
    at_depth = None if runs is None else runs[runs[TREE_DEPTH] == depth]
    lines = []
    for label, value in published_numbers.TREES_TRAIN_ACC.items():
        chosen = (
            select(at_depth[at_depth[LABEL] == label], train, train)
            if at_depth is not None
            else None
        )
        subject = f"{label}, tree depth {depth}: training accuracy (%)"
        if not chosen:
            lines.append(ScoreLine(item, subject, f"{value:g}", "–", NOT_RUN, reason))
            continue
        verdict = number_verdict(chosen.mean, published_numbers.PaperValue(value))
        facts = _trees_facts(chosen.runs, protocol)
        lines.append(ScoreLine(item, subject, f"{value:g}", chosen.text(), verdict, **facts))
    lines.append(_best_at_depth_10(at_depth, protocol, reason))
    lines.append(_gat_ggnn_beat_gcn_gin(runs, protocol, reason))
    return lines


def _best_per_label(runs: pd.DataFrame) -> dict[str, tuple[float, pd.DataFrame]]:
    train = BEST_TRAIN_ACC
    best = {}
    for label, group in runs.groupby(LABEL):
        chosen = select_group(group, train, train)
        best[label] = (chosen.mean, chosen.runs)
    return best


def _best_at_depth_10(at_depth: pd.DataFrame | None, protocol: str, why: str) -> ScoreLine:
    others = published_numbers.TREES_OTHERS_BELOW
    gat_lip, gat_pn = GAT_LIP.label, GAT_PN.label
    subject = (
        f"tree depth {published_numbers.TREES_DEPTH}: {gat_lip} above every other model, "
        f"all models but {gat_lip} and {gat_pn} < {others:g}%"
    )
    rule = "as stated, on mean training accuracy"
    claim = f"{gat_lip} best; others < {others:g}"
    if at_depth is None or at_depth.empty:
        return ScoreLine("Fig. 5", subject, claim, "–", NOT_RUN, why, rule=rule)
    best = _best_per_label(at_depth)
    ours = ", ".join(f"{label} {mean:.1f}" for label, (mean, _) in sorted(best.items()))
    lip = best.get(gat_lip, (np.nan, None))[0]
    rest = [mean for label, (mean, _) in best.items() if label != gat_lip]
    below = [mean for label, (mean, _) in best.items() if label not in (gat_lip, gat_pn)]
    holds = lip > max(rest, default=-np.inf) and max(below, default=-np.inf) < others
    facts = _trees_facts(pd.concat([runs for _, runs in best.values()]), protocol)
    verdict = HOLDS if holds else FAILS
    return ScoreLine("Fig. 5", subject, claim, ours, verdict, **facts, rule=rule)


def _gat_ggnn_beat_gcn_gin(runs: pd.DataFrame | None, protocol: str, why: str) -> ScoreLine:
    strong, weak = (GAT.label, GGNN.label), (GCN.label, GIN.label)
    both, either = " and ".join(strong), " and ".join(weak)
    subject = f"{both} behave better with depth than {either}"
    rule = (
        f"at every tree depth ≥ 4 with records of all four, the lower of {both} above the higher "
        f"of {either}"
    )
    claim = f"{', '.join(strong)} > {', '.join(weak)}"
    depths = [] if runs is None else sorted(int(d) for d in runs[TREE_DEPTH].dropna().unique())
    shown, failures, used = [], [], []
    for depth in (d for d in depths if d >= 4):
        assert runs is not None, "the depths are the runs'"
        best = _best_per_label(runs[runs[TREE_DEPTH] == depth])
        if not all(label in best for label in (*strong, *weak)):
            continue
        low, high = min(best[s][0] for s in strong), max(best[w][0] for w in weak)
        shown.append(f"d = {depth}: {low:.1f} vs {high:.1f}")
        if low <= high:
            failures.append(f"d = {depth}")
        used += [best[label][1] for label in (*strong, *weak)]
    found = (shown, failures, used)
    return _checked("Fig. 5", subject, rule, claim, found, why, lambda r: _trees_facts(r, protocol))


FIG6_DATASETS = ("cora", "pubmed", "ogbn_arxiv", "ogbn_proteins")
#: Fig. 6's model families: the plain model, then with LipschitzNorm, PairNorm and LayerNorm
FAMILIES = tuple(
    tuple(ModelConfig(model, norm) for norm in ("none", "lip", "pairnorm", "layernorm"))
    for model in ("gat", "gt")
)


def fig6_lines(
    runs: pd.DataFrame | None, grid: PresetGrid | None, protocol: str, why: Why
) -> list[ScoreLine]:
    """Fig. 6's claims per dataset: -Lip learns where the plain model fails; Lip beats PN, LN.

    -Lip learns beyond 15 layers where the plain model fails; LipschitzNorm beats PairNorm and
    LayerNorm.
    """
    families = [tuple(model.label for model in family) for family in FAMILIES]
    lines = []
    for dataset in FIG6_DATASETS:
        rows = None if runs is None else runs[runs[DATASET] == dataset]
        name = dataset_label(dataset)
        lines.append(_deep_lines(rows, families, name, protocol, why(dataset)))
        lines.append(_beats_other_norms(rows, families, name, protocol, why(dataset)))
    return lines


def _depth_means(rows: pd.DataFrame, label: str) -> dict[int, tuple[float, pd.DataFrame]]:
    means = {}
    for depth, group in rows[rows[LABEL] == label].groupby(DEPTH):
        chosen = select_group(group)
        means[int(depth)] = (chosen.mean, chosen.runs)
    return means


def _plain_models(families: list[tuple]) -> str:
    """The families' plain models: ``GAT and GT``."""
    return " and ".join(family[0] for family in families)


def _deep_lines(rows, families: list[tuple], name: str, protocol: str, why: str) -> ScoreLine:
    plain_models = _plain_models(families)
    lip_models = " and ".join(family[1] for family in families)
    subject = f"{name}: beyond {DEEP} layers {lip_models} learn where {plain_models} fail"
    rule = (
        f"at the deepest depth > {DEEP} with records of both, -Lip ≥ plain + {FAILS_BY_POINTS:g} "
        f"points of test accuracy, for {plain_models}"
    )
    claim = "-Lip learns, plain fails"
    shown, failures, used = [], [], []
    for plain, lip, *_ in families:
        if rows is None or rows.empty:
            break
        ours, theirs = _depth_means(rows, lip), _depth_means(rows, plain)
        deep = [d for d in ours if d in theirs and d > DEEP]
        if not deep:
            continue
        depth = max(deep)
        shown.append(f"{depth} layers: {lip} {ours[depth][0]:.1f}, {plain} {theirs[depth][0]:.1f}")
        if ours[depth][0] < theirs[depth][0] + FAILS_BY_POINTS:
            failures.append(lip)
        used += [ours[depth][1], theirs[depth][1]]
    found = (shown, failures, used)
    return _checked("Fig. 6", subject, rule, claim, found, why, lambda r: run_facts(r, protocol))


def _beats_other_norms(
    rows, families: list[tuple], name: str, protocol: str, why: str
) -> ScoreLine:
    subject = f"{name}: LipschitzNorm outperforms PairNorm and LayerNorm"
    rule = (
        "mean test accuracy over the depths with records of all three, for "
        f"{_plain_models(families)}"
    )
    claim = "Lip > PN, LN"
    shown, failures, used = [], [], []
    for _, lip, pn, ln in families:
        if rows is None or rows.empty:
            break
        means = {label: _depth_means(rows, label) for label in (lip, pn, ln)}
        common = set(means[lip]) & set(means[pn]) & set(means[ln])
        if not common:
            continue
        average = {label: np.mean([means[label][d][0] for d in common]) for label in means}
        shown.append(", ".join(f"{label} {value:.1f}" for label, value in average.items()))
        if average[lip] <= max(average[pn], average[ln]):
            failures.append(lip)
        used += [means[label][d][1] for label in means for d in sorted(common)]
    found = (shown, failures, used)
    return _checked("Fig. 6", subject, rule, claim, found, why, lambda r: run_facts(r, protocol))


__all__ = ["fig2_lines", "fig3_lines", "fig5_lines", "fig6_lines"]
