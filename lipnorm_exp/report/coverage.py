"""What a folder of records covers, and which of the scorecard's presets it can score.

The scorecard (`scorecard`) scores a preset's runs at ``scale=paper``
under the protocol its paper grid runs (`paper_protocol`) and no
others: a user's own runs (``make run``, a quick sweep, another protocol) leave its lines ``not
run``. `coverage` says so in one sentence, which the report prints first and the scorecard
opens with.
"""

import pandas as pd

from lipnorm_exp.records import FINISHED
from lipnorm_exp.report.aggregate import preset_runs, usable_runs
from lipnorm_exp.report.grids import PresetGrid, paper_protocol
from lipnorm_exp.report.paper_presets import PRESETS
from lipnorm_exp.report.run_row import PROTOCOL, SCALE, STATUS, TAGS

__all__ = ["SCORED_SCALE", "coverage", "paper_preset_runs", "scored_presets"]

#: the scale whose runs the scorecard scores
SCORED_SCALE = "paper"
#: how a run without tags (no preset: ``make run``, a sweep of one's own) is counted
UNTAGGED = "untagged"


def paper_preset_runs(
    frame: pd.DataFrame, preset: str
) -> tuple[pd.DataFrame | None, PresetGrid | None, str]:
    """The usable paper-scale runs of ``preset``, its grid and its paper protocol.

    The runs are those under that protocol; runs and grid are ``None`` where there are none.
    """
    protocol = paper_protocol(preset)
    found = preset_runs(usable_runs(frame, SCORED_SCALE, protocol), preset, SCORED_SCALE, protocol)
    return (*(found or (None, None)), protocol)


def scored_presets() -> list[str]:
    """The presets the scorecard has lines for (a paper table or a claim), in its order."""
    return [preset.name for preset in PRESETS if preset.paper_tables or preset.claims]


def _groups(frame: pd.DataFrame) -> str:
    """``scale paper, protocol published: depth (184), missing_vector (788); ...`` (by tag)."""
    parts = []
    for (scale, protocol), runs in frame.groupby([SCALE, PROTOCOL], dropna=False, sort=True):
        named = runs[TAGS].map(lambda tags: sorted(tags) or [UNTAGGED])
        tally = named.explode().value_counts().sort_index()
        runs_of = ", ".join(f"{name} ({count})" for name, count in tally.items())
        parts.append(f"scale {scale}, protocol {protocol}: {runs_of}")
    return "; ".join(parts)


def coverage(frame: pd.DataFrame) -> str:
    """One sentence: the runs of ``frame`` by scale, protocol and preset, and what they can score.

    Args:
        frame (pandas.DataFrame): the records
            (`load_records`).

    Returns:
        str: ``3 records (3 finished), by scale, protocol and tag: scale quick, protocol
        standard: untagged (3). The scorecard scores a preset's finished runs at scale paper
        under its paper protocol (...): these records hold none, so every line is not run.``
        (or which presets' lines are not run).
    """
    finished = int(frame[STATUS].isin(FINISHED).sum())
    records = f"{len(frame)} record{'' if len(frame) == 1 else 's'}"
    held = f"{records} ({finished} finished), by scale, protocol and tag: {_groups(frame)}."
    rule = (
        f"The scorecard scores a preset's finished runs at scale {SCORED_SCALE} under its paper "
        f"protocol (lipnorm-exp +experiment=<preset> scale={SCORED_SCALE})"
    )
    scored = scored_presets()
    missing = [name for name in scored if paper_preset_runs(frame, name)[0] is None]
    if len(missing) == len(scored):
        return f"{held} {rule}: these records hold none, so every line is not run."
    if not missing:
        return f"{held} {rule}: these records hold runs of every preset (a line without says why)."
    return (
        f"{held} {rule}: these records hold none of {', '.join(missing)}, whose lines are not run."
    )
