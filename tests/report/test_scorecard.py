"""The reproduction scorecard: one line per published number and figure claim, made from the
records only, the same bytes from the same records, and one record's change reaching its own
lines and no other.
"""

import io
import json
import math
import shutil
import statistics
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from lipnorm_exp.records import schema
from lipnorm_exp.records.numerics import NUMERICS_VERSION
from lipnorm_exp.records.verify import DIFFERENT, ROUNDING, RULE, rejudged
from lipnorm_exp.report import claims, published_numbers
from lipnorm_exp.report.command import main
from lipnorm_exp.report.coverage import coverage
from lipnorm_exp.report.frame import load_records, record_row, records_frame
from lipnorm_exp.report.paper_presets import PRESETS
from lipnorm_exp.report.scorecard import (
    CSV,
    MARKDOWN,
    MAX_LINE,
    Provenance,
    claim_lines,
    counts,
    markdown,
    provenance,
    read_findings,
    scorecard,
    summary_rows,
    table,
)
from lipnorm_exp.report.verdicts import (
    DIFFERS,
    DIVERGED_ALL,
    FAILS,
    HOLDS,
    NOT_RUN,
    REPRODUCED,
    SETTLED_SEEDS,
    TOLERANCE_POINTS,
    VERDICTS,
    number_verdict,
)

RUNS = REPO / "results" / "runs"


@pytest.fixture(scope="module")
def committed():
    return load_records(RUNS)


@pytest.fixture(scope="module")
def lines(committed):
    return scorecard(committed)


@pytest.mark.parametrize(
    ("ours", "published", "verdict"),
    [
        (77.4, published_numbers.PaperValue(79.4, 0.7), REPRODUCED),  # 2 points, more than the std
        (77.3, published_numbers.PaperValue(79.4, 0.7), DIFFERS),
        (65.2, published_numbers.PaperValue(69.3, 4.1), REPRODUCED),  # within the std, more than 2
        (65.1, published_numbers.PaperValue(69.3, 4.1), DIFFERS),
        (70.3, published_numbers.PaperValue(68.3), REPRODUCED),  # no std: 2 points
    ],
)
def test_a_number_is_reproduced_within_the_larger_of_its_std_and_two_points(
    ours, published, verdict
):
    assert number_verdict(ours, published) == verdict


def test_every_published_number_has_one_line_and_every_line_a_verdict(lines):
    for spec in (spec for preset in PRESETS for spec in preset.paper_tables):
        item = spec.caption.split(":")[0]
        published = sum(len(values) for values in spec.paper.values())
        assert sum(line.item == item for line in lines) == published, item
    assert {line.item for line in lines} >= {"Fig. 2", "Fig. 3", "Fig. 5", "Fig. 6"}
    assert all(line.verdict in VERDICTS for line in lines)
    for line in lines:
        assert (line.verdict == NOT_RUN) == (not line.runs), line
        if line.verdict in (NOT_RUN, DIFFERS):
            assert line.why, line  # the cause, or why it was not run
    assert sum(counts(lines).values()) == len(lines)


def test_every_line_rests_on_committed_records_of_its_protocol(lines):
    for line in lines:
        for rid in line.runs:
            record = json.loads((RUNS / f"{rid}.json").read_text())
            assert record["config"]["protocol"]["name"] == line.protocol
            assert record["config"]["scale"] == "paper"


def test_a_claim_of_a_model_without_runs_is_not_run_beside_one_with_runs(committed):
    [gradients] = [preset for preset in PRESETS if preset.name == "gradients"]
    without = committed[committed["label"] != claims.GAT_LIP.label]
    # Figs. 2 and 3: GAT at the setting chosen and at the paper's, GAT-Lip; the same, GAT-Lip × 2
    found = claim_lines(without, gradients)
    verdicts = [line.verdict == NOT_RUN for line in found]
    assert verdicts == [False, False, True, False, False, True, True]
    assert found[2].why == "compute: no run of it yet" and found[0].runs and found[1].runs


def _marks(lines, frame):
    findings = read_findings(REPO / "results")
    return [provenance(line, frame, findings) for line in lines]


def test_the_committed_scorecard_is_the_one_the_committed_records_make(lines, committed):
    made = markdown(lines, _marks(lines, committed), coverage(committed))
    assert (REPO / "results" / MARKDOWN).read_text() == made


def test_the_scorecard_opens_with_its_summary_and_no_line_is_long(lines, committed):
    text = markdown(lines, _marks(lines, committed), coverage(committed))
    assert text.index("## Summary") < text.index("## Lines") < text.index("## Details")
    assert max(len(line) for line in text.splitlines()) <= MAX_LINE
    summary = text.split("## Summary", 1)[1].split("## Lines", 1)[0]
    for item in {line.item for line in lines}:
        assert f"| {item} |" in summary
    total = next(row for row in summary.splitlines() if row.startswith("| **all** |"))
    assert total.split(" | ")[len(VERDICTS) + 1] == str(len(lines))
    for k, line in enumerate(lines, 1):  # every row links to its details, which name its runs
        assert f"[{k}](#line-{k})" in text and f'<a id="line-{k}"></a>' in text
        details = text.split(f'<a id="line-{k}"></a>', 1)[1].split("<a id=", 1)[0]
        assert all(rid in details for rid in line.runs)


def test_the_csv_holds_numbers_as_numbers(lines, committed):
    frame = pd.read_csv(io.StringIO(table(lines, _marks(lines, committed)).to_csv(index=False)))
    numeric = ("paper_mean", "paper_std", "ours_mean", "ours_std", "difference", "final_mean")
    for column in (*numeric, "final_std"):
        assert frame[column].dtype == float, column
    assert str(frame["n"].dtype) in ("int64", "Int64") or frame["n"].isna().any()
    numbers = frame.dropna(subset=["ours_mean"])
    assert len(numbers) == sum(
        line.numbers is not None and not math.isnan(line.numbers.ours_mean) for line in lines
    )
    assert ((numbers["ours_mean"] - numbers["paper_mean"]).round(2) == numbers["difference"]).all()


def test_a_table_1_line_gives_the_last_epochs_number_beside_the_best_validation_one(
    lines, committed
):
    frame = table(lines, _marks(lines, committed))
    table1 = frame[(frame["item"] == "Table 1") & frame["ours_mean"].notna()]
    assert len(table1) and table1["final_mean"].notna().all()  # 1000 epochs, each run whole
    histories = committed.set_index(schema.RUN_ID)[schema.HISTORY]
    for _, row in table1.iterrows():
        last = [100 * histories[rid][-1]["test_acc"] for rid in row["runs"].split()]
        assert row["final_mean"] == round(statistics.mean(last), 2)
        assert row["final_std"] == round(statistics.stdev(last), 2)
        assert "; final " in row["ours"]


def test_each_line_names_the_numerics_of_its_records_and_what_verification_found(lines, committed):
    by_id = committed.set_index("run_id")
    line = next(
        line
        for line in lines
        if len(line.runs) == 3 and by_id.loc[list(line.runs), "numerics"].isna().all()
    )
    unversioned = provenance(line, committed, read_findings(Path("/nonexistent")))
    assert unversioned == Provenance("unversioned ×3", False, "")
    frame = committed.copy()
    frame.loc[frame["run_id"] == line.runs[0], "numerics"] = NUMERICS_VERSION
    findings = pd.DataFrame(
        {"run_id": [line.runs[0], "0" * 16], "verdict": ["identical", "different"],
         "verified_at": ["f60c9eb0", "f60c9eb0"]}
    )  # fmt: skip
    mixed = provenance(line, frame, findings)
    assert mixed.numerics == f"unversioned ×2, v{NUMERICS_VERSION} ×1" and not mixed.current
    assert mixed.verified == "identical 1 of 3 at f60c9eb"
    made_by = frame.set_index("run_id").loc[line.runs[1], "git_commit"]
    replaced = pd.DataFrame(
        {"run_id": [line.runs[0], line.runs[1]], "verdict": ["identical", "different"],
         "verified_at": ["f60c9eb0", "f60c9eb0"], "stored_commit": [made_by, "b1d92a4"]}
    )  # fmt: skip
    frame.loc[frame["run_id"] == line.runs[0], "git_commit"] = made_by
    # the second record was made again (its commit is no longer the one verified): no finding
    assert provenance(line, frame, replaced).verified == "identical 1 of 3 at f60c9eb"


def test_a_pass_of_the_old_verify_rule_is_named_so_and_verifies_nothing(lines, committed):
    line = next(line for line in lines if len(line.runs) == 3)
    old = pd.DataFrame(
        {"run_id": list(line.runs[:2]), "verdict": ["within spread", "different"],
         "verified_at": ["75038f9a", "75038f9a"]}
    )  # fmt: skip
    found = provenance(line, committed, rejudged(old))
    # the old rule's different may be today's departed by rounding: it keeps its rule's name
    expected = "different (old rule) 1, within spread (old rule) 1 of 3 at 75038f9"
    assert found.verified == expected
    assert not found.passed
    rounding = old.assign(verdict=[ROUNDING, DIFFERENT], rule=[RULE, RULE])
    found = provenance(line, committed, rounding)
    assert found.verified == "different 1, same up to rounding 1 of 3 at 75038f9" and found.passed
    summary = summary_rows([line], [found])
    assert summary[-1].endswith("| 1/1 |")  # verified: a record of it is the same up to rounding
    assert summary_rows([line], [provenance(line, committed, rejudged(old))])[-1].endswith(
        "| 0/1 |"
    )


def _table3_gat_lip_15(lines):
    (line,) = [line for line in lines if line.subject == "GAT-Lip, Cora 15 layers"]
    return line


def lower_test_accuracy(record: dict) -> None:
    record["summary"][schema.TEST_ACC_AT_BEST_VAL] = 0.123


def raise_gradients(record: dict) -> None:
    for row in record["history"]:
        row["grad_attn"] = [10.0 for _ in row["grad_attn"]]


def _fig2_gat_lip(lines):
    return next(line for line in lines if line.item == "Fig. 2" and "GAT-Lip," in line.subject)


@pytest.mark.parametrize(
    ("pick", "which", "edit", "expect"),
    [
        (_table3_gat_lip_15, 0, lower_test_accuracy, lambda old, new: new.ours != old.ours),
        (
            _fig2_gat_lip,
            0,
            raise_gradients,
            lambda old, new: new.verdict == FAILS and new.ours != old.ours,
        ),
        (  # the last run of the line: one of a setting other than the chosen one
            _fig2_gat_lip,
            -1,
            raise_gradients,
            lambda old, new: (
                old.verdict == new.verdict and ": fails (" in new.why and new.why != old.why
            ),
        ),
    ],
)
def test_changing_one_record_changes_its_lines_and_no_other(
    committed, lines, pick, which, edit, expect
):
    line = pick(lines)
    rid = line.runs[which]
    path = RUNS / f"{rid}.json"
    record = json.loads(path.read_text())
    edit(record)
    others = committed[committed["run_id"] != rid]
    changed = scorecard(pd.concat([others, records_frame([record_row(record, path)])]))
    assert len(changed) == len(lines)
    differ = [(old, new) for old, new in zip(lines, changed, strict=True) if old != new]
    assert differ and all(rid in old.runs for old, _ in differ)
    assert expect(line, pick(changed))


def test_the_report_writes_the_scorecard_and_regenerates_the_same_bytes(tmp_path, lines):
    runs = tmp_path / "runs"
    runs.mkdir()
    for rid in {rid for line in lines for rid in line.runs}:  # the records the lines rest on
        shutil.copy(RUNS / f"{rid}.json", runs)
    for out in (tmp_path / "first", tmp_path / "again"):
        assert main(["--runs", str(runs), "--out", str(out), "--only", "scorecard"]) == 0
    for name in (MARKDOWN, CSV):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()
    text = (tmp_path / "first" / MARKDOWN).read_text()
    tally = counts(lines)
    assert f"**{len(lines)} lines: " in text and f"{tally[HOLDS]} holds" in text
    assert len((tmp_path / "first" / CSV).read_text().splitlines()) == len(lines) + 1


def test_a_number_whose_every_seed_diverged_reads_diverged_never_differs(committed, lines):
    line = _table3_gat_lip_15(lines)
    # every seed of its setting: those that chose it and those that report it
    setting = committed.set_index("run_id").loc[line.runs[0], "setting"]
    every_seed = committed.loc[committed["setting"] == setting, "run_id"].tolist()
    assert set(line.runs) < set(every_seed)
    diverged = []
    for rid in every_seed:
        record = json.loads((RUNS / f"{rid}.json").read_text())
        record["status"] = schema.DIVERGED
        record["summary"].update(dict.fromkeys(schema.SUMMARY_ACCURACIES, None))
        record["summary"][schema.DIVERGED_AT_EPOCH] = 3
        diverged.append(record_row(record, RUNS / f"{rid}.json"))
    others = committed[~committed["run_id"].isin(every_seed)]
    changed = scorecard(pd.concat([others, records_frame(diverged)]))
    (new,) = [new for new in changed if new.subject == line.subject]
    assert new.verdict == DIVERGED_ALL and "†" in new.ours


def test_each_figure_claim_has_a_verdict_at_the_setting_chosen_and_at_the_papers_own(lines):
    """Fig. 2's blow-up, checked on the records by hand at each of the two settings."""
    fig2 = [line for line in lines if line.item == "Fig. 2" and line.subject.startswith("GAT,")]
    chosen, own = fig2
    assert chosen.subject.endswith(", at the setting chosen on validation")
    assert own.subject.endswith(", at the paper's own setting")
    assert chosen.rule == own.rule == "every seed's largest attention-gradient norm ≥ 1e+07"
    for line, dropout in ((chosen, 0.0), (own, 0.6)):
        peaks = []
        for rid in line.runs:
            record = json.loads((RUNS / f"{rid}.json").read_text())
            model = record["config"]["model"]
            if (model["dropout"], model["heads"]) == (dropout, 4):
                history = record["history"][:100]
                peaks.append((record["config"]["seed"], max(max(r["grad_attn"]) for r in history)))
        peaks = [peak for _, peak in sorted(peaks)]
        assert line.ours == ", ".join(f"{peak:.2g}" for peak in peaks)
        assert line.verdict == (HOLDS if min(peaks) >= 1e7 else FAILS)
    assert (chosen.verdict, own.verdict) == (FAILS, HOLDS)  # the blow-up is the paper's setting's


def test_a_mean_within_one_standard_error_of_its_band_edge_is_provisional_below_ten_seeds(lines):
    """A label more seeds could flip says so, and the summary counts it apart."""
    near = []
    for line in lines:
        if line.verdict not in (REPRODUCED, DIFFERS) or line.seeds.startswith("0"):
            continue  # the choosing seeds' numbers are provisional for another reason
        got = line.numbers
        assert got is not None
        edge = abs(got.ours_mean - got.paper_mean) - max(got.paper_std or 0.0, TOLERANCE_POINTS)
        if abs(edge) < got.ours_std / math.sqrt(got.n) and got.n < SETTLED_SEEDS:
            near.append(line)
            assert line.provisional and "standard errors" in line.why, line.subject
        elif got.n >= 5:
            assert not line.provisional, (line.subject, line.why)
    assert near  # the committed records hold such cells
    unsettled = counts(lines, only_provisional=True)
    assert sum(unsettled.values()) >= len(near)
    summary = "\n".join(summary_rows(lines, [Provenance("", True, "")] * len(lines)))
    assert f"({unsettled[REPRODUCED]} provisional)" in summary or not unsettled[REPRODUCED]
