"""``lipnorm-exp-verify``: a record trained again with today's code, and what it is judged."""

import errno
import json
import math
import threading
from pathlib import Path

import pandas as pd
import pytest

from lipnorm_exp.cli import verify_cost, verify_runs
from lipnorm_exp.cli.verify import main
from lipnorm_exp.cli.verify_runs import Finding, write_findings
from lipnorm_exp.records import COMPLETED, DIVERGED, NUMERICS_VERSION, record_path, schema
from lipnorm_exp.records.schema import GRAD_ATTN
from lipnorm_exp.records.verify import (
    DEPARTED,
    DIFFERENT,
    EARLIER_RULES,
    GROWTH,
    IDENTICAL,
    OLD_RULE,
    PASSING,
    ROUNDING,
    ROUNDING_EPOCHS,
    RTOL,
    RULE,
    VERDICTS,
    WITHIN_SPREAD,
    judge,
    jumps,
    rejudged,
    relative_difference,
    spread,
)
from lipnorm_exp.training.launch import run
from lipnorm_exp.util.errors import DiskFullError
from lipnorm_exp.util.lock import folder_lock

REPO = Path(__file__).resolve().parents[2]
SMALL = ("model.depth=2", "model.hidden=16", "model.heads=2", "train.epochs=3")
LOSSES = ("train_step_loss", "train_loss", "val_loss", "test_loss")
ACCURACIES = ("train_acc", "val_acc", "test_acc")


# synthetic histories: 100 epochs of a run that learns, its accuracies whole nodes of 1000


def _history(epochs: int = 100, phase: float = 0.0) -> list[dict]:
    rows = []
    for epoch in range(1, epochs + 1):
        loss = 0.3 + 1.6 * math.exp(-epoch / (20 + phase)) + 0.01 * math.sin(epoch + phase)
        acc = round(1000 * (0.8 - 0.6 * math.exp(-epoch / (15 + phase)))) / 1000
        row = {"epoch": epoch, "time_s": 0.1 + 0.01 * (epoch % 3)}
        row |= {key: loss * (1 + 0.1 * k) for k, key in enumerate(LOSSES)}
        row |= {key: acc - 0.01 * k for k, key in enumerate(ACCURACIES)}
        rows.append(row)
    return rows


def _record(history: list[dict], test: float = 0.8, status: str = COMPLETED) -> dict:
    summary = {schema.TEST_ACC_AT_BEST_VAL: test}
    return {schema.STATUS: status, schema.HISTORY: history, schema.SUMMARY: summary}


def _perturbed(history: list[dict], start: int, size: float, growth: float) -> list[dict]:
    """``history`` with its losses off by ``size``, growing ``growth``-fold each epoch, from
    epoch ``start`` on (as rounding in another order does, and chaos after it)."""
    rows = [dict(row) for row in history]
    for row in rows[start - 1 :]:
        for key in LOSSES:
            row[key] *= 1 + size
        size = min(size * growth, 0.1)
    return rows


def test_an_equal_history_is_identical_whatever_its_epoch_times():
    stored = _record(_history())
    ours = _record([{**row, "time_s": 9.0} for row in _history()])
    judged = judge(stored, ours, 0.5)
    assert judged.verdict == IDENTICAL and judged.first_different_epoch is None
    assert judged.departure is None and judged.rule == RULE


def test_a_1e_7_departure_growing_slowly_is_the_same_up_to_rounding():
    stored = _record(_history())
    ours = _record(_perturbed(_history(), start=4, size=1e-7, growth=1.1))
    judged = judge(stored, ours, 0.5)
    assert judged.verdict == ROUNDING and judged.first_different_epoch == 4
    assert judged.departure == pytest.approx(1e-7, rel=1e-3)
    assert judged.departure_column in LOSSES
    assert judged.rounding_window == pytest.approx(1e-7 * 1.1 ** (ROUNDING_EPOCHS - 1), rel=1e-3)
    assert judged.rounding_excess == pytest.approx(0.1, rel=1e-3)  # 1e-7 of RTOL's 1e-6


def test_a_late_chaotic_departure_passes_where_the_final_numbers_stay_within_the_spread():
    stored = _record(_history(), test=0.800)
    # 1e-7, growing 1.5-fold an epoch: beyond the tolerance 25 epochs on, 10% by the end
    chaotic = _perturbed(_history(), start=2, size=1e-7, growth=1.5)
    assert (
        relative_difference(chaotic[-1]["val_loss"], stored[schema.HISTORY][-1]["val_loss"]) > 0.05
    )
    assert judge(stored, _record(chaotic, test=0.797), 0.5).verdict == ROUNDING
    # the same history ending further apart than the setting's spread departed by rounding: it
    # neither verifies the record nor calls it different; ending otherwise is different
    departed = judge(stored, _record(chaotic, test=0.790), 0.5)
    assert departed.verdict == DEPARTED and departed.verdict not in PASSING
    assert departed.rounding_excess <= 1
    assert judge(stored, _record(chaotic, status=DIVERGED), 0.5).verdict == DIFFERENT
    # a departure beyond the rounding window that ends within the spread is still different
    changed = _record(_perturbed(_history(), start=2, size=3.2e-6, growth=1.5), test=0.800)
    assert judge(stored, changed, 0.5).verdict == DIFFERENT


def test_a_one_seed_setting_is_judged_on_its_history_alone():
    # no spread known (one seed): chaos may move the final number anywhere, rounding may not
    stored = _record(_history(), test=0.323)
    chaotic = _record(_perturbed(_history(), start=1, size=6e-8, growth=1.5), test=0.380)
    assert spread([32.3]) is None
    assert judge(stored, chaotic, None).verdict == ROUNDING
    assert judge(stored, chaotic, 0.5).verdict == DEPARTED
    changed = _record(_perturbed(_history(), start=1, size=3.2e-6, growth=1.5), test=0.323)
    assert judge(stored, changed, None).verdict == DIFFERENT
    diverged = _record(chaotic[schema.HISTORY], status=DIVERGED)
    assert judge(stored, diverged, None).verdict == DIFFERENT


def test_another_seeds_history_is_different_even_with_the_same_final_number():
    stored = _record(_history(), test=0.8)
    judged = judge(stored, _record(_history(phase=0.5), test=0.8), 2.0)
    assert judged.verdict == DIFFERENT and judged.first_different_epoch == 1
    assert judged.departure > 100 * RTOL


def test_another_seeds_committed_record_is_different():
    """Two committed records of one setting, seeds 1 and 2 (GAT-PN 4 × 16, Cora, 2 layers)."""
    first, second = (
        json.loads(record_path(REPO / "results" / "runs", rid).read_text())
        for rid in ("0e062ba8f6d5c59d", "66948cbf47aeb084")
    )
    assert first[schema.CONFIG]["seed"] != second[schema.CONFIG]["seed"]
    assert {k: v for k, v in first[schema.CONFIG].items() if k not in ("seed", "tags")} == {
        k: v for k, v in second[schema.CONFIG].items() if k not in ("seed", "tags")
    }
    judged = judge(first, second, 10.0)  # however wide the spread
    assert judged.verdict == DIFFERENT and judged.first_different_epoch == 1


def test_a_change_of_the_model_parts_beyond_rounding_at_once():
    # the output scaled by 1.001 parts a GCN's losses by 6e-6 at the first epoch
    stored = _record(_history())
    judged = judge(stored, _record(_perturbed(_history(), 1, 6e-6, 1.1)), 2.0)
    assert judged.verdict == DIFFERENT and judged.departure > RTOL
    # a departure within rounding that grows faster than rounding does is different too
    jump = _perturbed(_perturbed(_history(), 4, 1e-7, 1.0), 6, 1e-4, 1.0)
    judged = judge(stored, _record(jump), 2.0)
    assert judged.verdict == DIFFERENT and judged.first_different_epoch == 4
    assert judged.rounding_excess == pytest.approx(1e-4 / (RTOL * GROWTH**2), rel=1e-2)
    # so does a change that shows only late (a schedule, say): its first departure is large
    late = judge(stored, _record(_perturbed(_history(), 50, 1e-3, 1.0)), 2.0)
    assert late.verdict == DIFFERENT and late.first_different_epoch == 50


def test_accuracies_move_by_whole_nodes_and_are_not_held_to_the_tolerance():
    rows = _perturbed(_history(), start=3, size=1e-7, growth=1.0)
    rows[2]["val_acc"] += 0.002  # a node whose two largest logits were within rounding
    judged = judge(_record(_history()), _record(rows), 0.5)
    assert judged.verdict == ROUNDING and judged.departure_column in LOSSES
    assert judged.departure == pytest.approx(1e-7, rel=1e-3)
    # where only an accuracy differs at the first departure, it is the departure's column
    only = _history()
    only[2]["val_acc"] += 0.002
    judged = judge(_record(_history()), _record(only), 0.5)
    assert judged.verdict == ROUNDING and judged.departure_column == "val_acc"
    assert judged.rounding_window == 0


def test_gradient_norms_jump_where_rounding_tips_a_tie_and_are_not_held_to_the_envelope():
    # a 20-layer GAT-Lip's losses stay within rounding while one epoch's gradient norm jumps
    stored = _history()
    for k, row in enumerate(stored):
        row[GRAD_ATTN] = [1e-4 * (1 + k % 3), 2e-4]
    rows = _perturbed(stored, start=2, size=1e-7, growth=1.0)
    rows = [{**row, GRAD_ATTN: list(row[GRAD_ATTN])} for row in rows]
    rows[1][GRAD_ATTN][0] *= 1 + 4e-7
    rows[6][GRAD_ATTN][0] *= 1 + 3e-3  # at epoch 7, back at epoch 8
    judged = judge(_record(stored), _record(rows), 0.5)
    assert judged.verdict == ROUNDING and judged.first_different_epoch == 2
    assert judged.departure_column in LOSSES and judged.rounding_excess == pytest.approx(0.1)
    assert jumps(GRAD_ATTN) and jumps("val_acc") and not jumps("train_loss")
    # the same jump in a loss is not rounding
    rows[6]["train_loss"] *= 1 + 3e-3
    assert judge(_record(stored), _record(rows), 0.5).verdict == DIFFERENT
    # where only a gradient norm differs at the first departure, it is the departure's column
    only = [{**row, GRAD_ATTN: list(row[GRAD_ATTN])} for row in stored]
    only[4][GRAD_ATTN][1] *= 1 + 1e-3
    judged = judge(_record(stored), _record(only), 0.5)
    assert judged.verdict == ROUNDING and judged.departure_column == GRAD_ATTN
    assert judged.departure == pytest.approx(1e-3, rel=1e-2)


def test_a_longer_history_with_equal_rows_or_another_column_is_different():
    stored = _record(_history(50))
    longer = judge(stored, _record(_history(60)), 5.0)
    assert longer.verdict == DIFFERENT and longer.first_different_epoch == 51
    added = judge(stored, _record([{**row, "lr": 0.01} for row in _history(50)]), 5.0)
    assert added.verdict == DIFFERENT and added.departure_column == "lr"


def test_relative_differences_of_numbers_lists_and_missing_values():
    assert relative_difference(2.0, 2.0) == 0 and relative_difference(None, None) == 0
    assert relative_difference(float("nan"), float("nan")) == 0
    assert relative_difference(1.0, 1.0 + 1e-6) == pytest.approx(1e-6, rel=1e-5)
    assert relative_difference(-2.0, 2.0) == 2.0
    assert relative_difference([1.0, 4.0], [1.0, 2.0]) == 0.5
    assert math.isinf(relative_difference(1.0, None))
    assert math.isinf(relative_difference(1.0, float("inf")))
    assert math.isinf(relative_difference([1.0], [1.0, 2.0]))


def test_the_spread_is_the_seeds_sample_std_and_at_least_half_a_point():
    assert spread([80.0]) is None and spread([]) is None
    assert spread([78.0, 80.0, 82.0]) == pytest.approx(2.0)
    assert spread([80.0, 80.1, float("nan"), None]) == 0.5
    assert spread([80.0, float("nan"), None]) is None


def test_the_verdicts_are_named_in_one_place():
    assert VERDICTS == ("identical", "same up to rounding", "departed by rounding", "different")
    assert PASSING == (IDENTICAL, ROUNDING) and WITHIN_SPREAD not in PASSING


# the command, on a record made here


@pytest.fixture(autouse=True)
def data_in_tmp(tmp_path, monkeypatch):
    """A re-run prepares its data where a user's run would (``LIPNORM_DATA_DIR``): in tmp here."""
    monkeypatch.setenv("LIPNORM_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def stored(make_cfg, tmp_path):
    """One finished record in ``tmp_path/runs``, made here."""
    [record] = run(make_cfg(*SMALL))
    return tmp_path / "runs", record


def _verify(runs, out, *arguments):
    return main(["--runs", str(runs), "--out", str(out), *arguments])


def _finding(out) -> dict:
    [finding] = pd.read_csv(out, dtype={"run_id": str}).to_dict("records")
    return finding


def test_a_record_made_by_todays_code_is_identical_and_a_changed_one_is_not(
    stored, tmp_path, capsys
):
    runs, record = stored
    out = tmp_path / "verification.csv"
    assert _verify(runs, out, "--run-id", record["run_id"]) == 0
    finding = _finding(out)
    assert finding["run_id"] == record["run_id"] and finding["verdict"] == IDENTICAL
    assert finding["threads"] == 1 and finding["epochs"] == 3 and finding["rule"] == RULE

    # the record trained again, kept: a record of today's numerics, the same in all but times
    kept = tmp_path / "kept"
    assert _verify(runs, out, "--run-id", record["run_id"], "--again", "--keep", str(kept)) == 0
    remade = json.loads(record_path(kept, record["run_id"]).read_text())
    assert remade[schema.NUMERICS] == NUMERICS_VERSION and remade[schema.STATUS] == COMPLETED
    assert remade[schema.SUMMARY] == record[schema.SUMMARY]
    assert remade[schema.STARTED_AT] != record[schema.STARTED_AT]

    # the same run verified again at the same commit is skipped unless asked
    assert _verify(runs, out, "--run-id", record["run_id"]) == 0
    assert "verified at this commit already" in capsys.readouterr().out

    # a stored record whose second epoch parts by 1e-3 (as older code's would), same result
    path = record_path(runs, record["run_id"])
    changed = json.loads(path.read_text())
    changed[schema.HISTORY][1]["val_loss"] *= 1 + 1e-3
    path.write_text(json.dumps(changed))
    assert _verify(runs, out, "--run-id", record["run_id"], "--again") == 1
    finding = _finding(out)  # replaced, not added
    assert finding["verdict"] == DIFFERENT and finding["first_different_epoch"] == 2
    assert finding["departure"] == pytest.approx(1e-3, rel=1e-3)
    assert finding["departure_column"] == "val_loss"
    assert finding["rounding_excess"] == pytest.approx(1e3, rel=1e-3)
    printed = capsys.readouterr().out
    assert "from epoch 2: 1.0e-03 in val_loss; 1e+03 x what rounding" in printed
    test = 100 * record[schema.SUMMARY][schema.TEST_ACC_AT_BEST_VAL]
    assert f"; test {test:.2f} -> {test:.2f} (" in printed  # points, two decimals


def test_a_history_that_parts_by_rounding_is_the_same_up_to_rounding(stored, tmp_path):
    runs, record = stored
    path = record_path(runs, record["run_id"])
    changed = json.loads(path.read_text())
    changed[schema.HISTORY][2]["train_loss"] *= 1 + 1e-7  # a rounding difference at epoch 3
    path.write_text(json.dumps(changed))
    out = tmp_path / "verification.csv"
    assert _verify(runs, out, "--run-id", record["run_id"]) == 0
    finding = _finding(out)
    assert finding["verdict"] == ROUNDING and finding["first_different_epoch"] == 3
    assert finding["departure_column"] == "train_loss"
    assert finding["departure"] == pytest.approx(1e-7, rel=0.05)


def test_the_findings_file_names_the_departure_and_the_rule_and_keeps_old_findings(tmp_path):
    out = tmp_path / "verification.csv"
    old = ["run_id,verdict,first_different_epoch,stored_test,ours_test,spread,verified_at"]
    old += [
        "aaaaaaaaaaaaaaaa,identical,,80.0,80.0,1.0,f60c9eb",
        "bbbbbbbbbbbbbbbb,within spread,2.0,80.0,80.4,1.0,f60c9eb",
        "cccccccccccccccc,different,1.0,80.0,77.0,1.0,f60c9eb",
    ]
    out.write_text("\n".join(old) + "\n")
    finding = Finding(
        run_id="dddddddddddddddd",
        verdict=ROUNDING,
        rule=RULE,
        first_different_epoch=7,
        departure=2.5e-7,
        departure_column="test_loss",
        rounding_window=4e-7,
        rounding_excess=0.25,
        stored_test=80.0,
        ours_test=80.1,
        spread=0.9,
        stored_commit="0" * 40,
        verified_at="1" * 40,
        stored_processor="AMD EPYC",
        ours_processor="AMD EPYC",
        threads=2,
        epochs=300,
        seconds=9.5,
    )
    written = write_findings([finding], out)
    frame = pd.read_csv(out, dtype={"run_id": str})
    assert list(frame.columns) == list(written.columns)
    for column in ("rule", "first_different_epoch", "departure", "departure_column",
                   "rounding_window", "rounding_excess"):  # fmt: skip
        assert column in frame.columns
    rows = frame.set_index("run_id")
    assert len(rows) == 4  # no finding dropped
    assert rows.loc["aaaaaaaaaaaaaaaa", "rule"] == RULE  # identical under either rule
    # beyond the spread: different or departed by rounding today, which its history would tell
    assert rows.loc["cccccccccccccccc", ["verdict", "rule"]].tolist() == [DIFFERENT, OLD_RULE]
    # the old rule's pass cannot be judged again without its history: it says so
    assert rows.loc["bbbbbbbbbbbbbbbb", ["verdict", "rule"]].tolist() == [WITHIN_SPREAD, OLD_RULE]
    assert rows.loc["dddddddddddddddd", "departure_column"] == "test_loss"
    assert rows.loc["dddddddddddddddd", "first_different_epoch"] == 7
    assert "7.0" not in out.read_text().splitlines()[-1]  # an epoch is written as a whole number


def _identical(rid: str) -> Finding:
    return Finding(
        run_id=rid,
        verdict=IDENTICAL,
        rule=RULE,
        first_different_epoch=None,
        departure=None,
        departure_column=None,
        rounding_window=None,
        rounding_excess=None,
        stored_test=80.0,
        ours_test=80.0,
        spread=1.0,
        stored_commit="0" * 40,
        verified_at="1" * 40,
        stored_processor="AMD EPYC",
        ours_processor="AMD EPYC",
        threads=1,
        epochs=300,
        seconds=9.5,
    )


def test_two_verifies_writing_one_large_findings_file_at_once_lose_nothing(tmp_path, monkeypatch):
    out = tmp_path / "verification.csv"
    rows = [f"{k:016x},identical,{RULE},,80.0,80.0,1.0,{'1' * 40}" for k in range(20_000)]
    header = "run_id,verdict,rule,first_different_epoch,stored_test,ours_test,spread,verified_at"
    out.write_text("\n".join([header, *rows]) + "\n")
    # the first writer holds the file, read, until the second is waiting for it
    first_has_read, second_waits = threading.Event(), threading.Event()

    def rejudged_then_wait(found):
        if threading.current_thread().name == "first":
            first_has_read.set()
            assert second_waits.wait(timeout=60), "the second writer did not wait for the first"
        return rejudged(found)

    def lock_telling_the_wait(folder, name):
        on_wait = second_waits.set if threading.current_thread().name == "second" else None
        return folder_lock(folder, name, on_wait=on_wait)

    monkeypatch.setattr(verify_runs, "rejudged", rejudged_then_wait)
    monkeypatch.setattr(verify_runs, "folder_lock", lock_telling_the_wait)
    failures = []

    def write(rid: str) -> None:
        try:
            write_findings([_identical(rid)], out)
        except BaseException as error:  # reported by the test, not lost in the thread
            failures.append(error)

    first = threading.Thread(target=write, args=("a" * 16,), name="first")
    second = threading.Thread(target=write, args=("b" * 16,), name="second")
    first.start()
    assert first_has_read.wait(timeout=60)
    second.start()
    first.join()
    second.join()
    assert failures == []
    frame = pd.read_csv(out, dtype={"run_id": str})
    assert len(frame) == 20_002
    assert {"a" * 16, "b" * 16, f"{19_999:016x}"} <= set(frame["run_id"])


def test_a_full_disk_leaves_the_findings_file_as_it_was_and_names_its_folder(tmp_path, monkeypatch):
    out = tmp_path / "verification.csv"
    write_findings([_identical("a" * 16)], out)
    before = out.read_bytes()

    def no_space(frame, path, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", no_space)
    with pytest.raises(DiskFullError, match=f"^no space left on the device of {tmp_path} to "):
        write_findings([_identical("b" * 16)], out)
    assert out.read_bytes() == before
    assert list(tmp_path.glob(".*.tmp")) == []


def test_old_findings_are_judged_again_where_what_they_stored_allows():
    old = pd.DataFrame(
        {"run_id": ["a", "b", "c"], "verdict": [IDENTICAL, WITHIN_SPREAD, DIFFERENT]}
    )
    assert rejudged(old)["rule"].tolist() == [RULE, OLD_RULE, OLD_RULE]
    new = old.assign(rule=[RULE, OLD_RULE, OLD_RULE])
    assert rejudged(new).equals(new)
    # an earlier, stricter epoch-by-epoch rule: what passed it passes today's; its different waits
    assert RULE not in EARLIER_RULES
    for earlier_rule in EARLIER_RULES:
        earlier = pd.DataFrame(
            {
                "run_id": ["d", "e", "f"],
                "verdict": [IDENTICAL, ROUNDING, DIFFERENT],
                "rule": [earlier_rule] * 3,
            }
        )
        assert rejudged(earlier)["rule"].tolist() == [RULE, RULE, earlier_rule]


def test_a_dry_run_trains_nothing_and_an_unknown_run_is_refused_in_one_line(
    stored, tmp_path, capsys
):
    runs, record = stored
    out = tmp_path / "verification.csv"
    assert _verify(runs, out, "--run-id", record["run_id"], "--dry-run") == 0
    printed = capsys.readouterr().out
    assert "1 runs to verify" in printed and not out.exists()
    machine = record["machine"]
    assert (
        f"  1 made on cpu ({machine['processor_model']}), numerics {record['numerics']}: "
        in printed
    )
    assert _verify(runs, out, "--run-id", "0123456789abcdef") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("lipnorm_exp.verify: error: --run-id 0123456789abcdef: no finished")


# the command's file arguments: one line naming the argument, exit 2, nothing written


def _bad_files(folder: Path) -> dict[str, Path]:
    """Files a user may hand the command by mistake, in ``folder``, by name."""
    made = {
        "a_file": b"x",
        "empty": b"",
        "binary": b"\xff\xfe\x00\x81binary",
        "columnless": b"a,b\n1,2\n",
        "semicolons": b"row;column;seed;run_id;verdict;verified_at\nr;c;0;x;identical;y\n",
        "unknown": b"row,column,seed,run_id\nr,c,0,0123456789abcdef\n",
    }
    paths = {name: folder / (name if name == "a_file" else f"{name}.csv") for name in made}
    for name, data in made.items():
        paths[name].write_bytes(data)
    (folder / "a_folder").mkdir()
    return {**paths, "a_folder": folder / "a_folder"}


BAD_ARGUMENTS = {
    # --out: a folder, an empty path, a path under a file, /proc, existing files not findings
    "out a folder": (("--out", "{a_folder}"), "--out {a_folder} is a folder; give a file path"),
    "out empty": (("--out", ""), "argument --out: '' is not a file path"),
    "out ends in /": (("--out", "{a_folder}/"), "is not a file path"),
    "out under a file": (("--out", "{a_file}/v.csv"), "lies under the file {a_file}"),
    "out in /proc": (("--out", "/proc/verification.csv"), "--out /proc/verification.csv: /proc"),
    "out empty file": (("--out", "{empty}"), "--out {empty} is empty; give a findings"),
    "out binary": (("--out", "{binary}"), "--out {binary} is not UTF-8 CSV text"),
    "out no columns": (("--out", "{columnless}"), "has no column run_id, verdict, verified_at"),
    "out semicolons": (("--out", "{semicolons}"), "has no column run_id, verdict, verified_at"),
    # --cells: empty, binary, ;-separated, without its columns, a folder, no known run
    "cells empty": (("--cells", "{empty}"), "--cells {empty} is empty; give a table's"),
    "cells binary": (("--cells", "{binary}"), "--cells {binary} is not UTF-8 CSV text"),
    "cells semicolons": (("--cells", "{semicolons}"), "has no column row, column, seed"),
    "cells no columns": (("--cells", "{columnless}"), "has no column row, column, seed"),
    "cells a folder": (("--cells", "{a_folder}"), "--cells {a_folder} is not a file"),
    "cells unknown runs": (("--cells", "{unknown}"), "none of its 1 runs has a finished"),
    # --keep: a file, a path under a file, an empty path
    "keep a file": (("--keep", "{a_file}"), "--keep {a_file} is a file; give a folder path"),
    "keep under a file": (("--keep", "{a_file}/kept"), "lies under the file {a_file}"),
    "keep empty": (("--keep", ""), "argument --keep: '' is not a folder"),
    # --device, --threads, --per-setting: what a run takes
    "device bogus": (("--device", "bogus"), "--device: 'bogus' is not auto, cpu, cuda or cuda:<i"),
    "device absent": (("--device", "cuda:99"), "--device=cuda:99 is not on this machine ("),
    "threads 0": (("--threads", "0"), "argument --threads: 0 must be an integer >= 1"),
    "per-setting 0": (("--per-setting", "-1"), "argument --per-setting: -1 must be an integer"),
}


def _status(argv: list[str]) -> int | str | None:
    """The exit status of the command: what ``main`` returns, or argparse's exit."""
    try:
        return main(argv)
    except SystemExit as exit:
        return exit.code


@pytest.mark.parametrize("case", BAD_ARGUMENTS)
def test_a_bad_file_argument_is_refused_in_one_line_before_anything_runs(case, tmp_path, capsys):
    arguments, expected = BAD_ARGUMENTS[case]
    files = {name: str(path) for name, path in _bad_files(tmp_path).items()}
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    which = () if "--cells" in arguments else ("--run-id", "0123456789abcdef")
    argv = ["--runs", str(tmp_path / "runs"), *which, *(a.format(**files) for a in arguments)]
    if "--out" not in arguments:
        argv += ["--out", str(tmp_path / "new.csv")]
    assert _status(argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("lipnorm_exp.verify: error: ") and captured.out == ""
    assert expected.format(**files) in line
    after = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert after == before  # nothing written, nothing made


def test_the_time_to_go_scales_what_the_runs_left_took_by_this_machines_pace(monkeypatch):
    made = [{"timing": {"total_s": seconds}} for seconds in (100.0, 300.0, 600.0)]
    now = iter([0.0, 50.0, 200.0, 500.0])
    monkeypatch.setattr(verify_cost.time, "monotonic", lambda: next(now))
    pace = verify_cost.Pace(made)
    # half the time it took when made: the 900 s left take 450 s here
    assert pace.done(made[0]) == "0m50s spent, about 7m30s to go"
    assert pace.done(made[1]) == "3m20s spent, about 5m00s to go"
    assert pace.done(made[2]) == "8m20s spent, about 0m00s to go"


def test_the_cost_is_told_by_machine_and_numerics_most_first():
    records = [
        {
            "machine": {"device": "cpu", "processor_model": "AMD EPYC"},
            "numerics": 2,
            "timing": {"total_s": 1800.0},
        },
        {
            "machine": {"device": "cuda:0 NVIDIA H200", "processor_model": "AMD EPYC"},
            "numerics": 2,
            "timing": {"total_s": 7200.0},
        },
        {"device": "cpu", "timing": {"total_s": 360.0}},
        {
            "machine": {"device": "cpu", "processor_model": "AMD EPYC"},
            "numerics": 2,
            "timing": {"total_s": 1800.0},
        },
    ]
    assert verify_cost.cost_lines(records) == [
        "  1 made on cuda:0 NVIDIA H200, numerics 2: 2.00 h",
        "  2 made on cpu (AMD EPYC), numerics 2: 1.00 h",
        "  1 made on cpu, unversioned: 0.10 h",
    ]


def test_whole_cells_trains_every_seed_of_a_cell_and_judges_the_cell(make_cfg, tmp_path, capsys):
    """``--cells T.runs.csv --whole-cells``: each seed a finding, the cell a verdict of its own."""
    records = [run(make_cfg(*SMALL, f"seed={seed}"))[0] for seed in (100, 101)]
    table = tmp_path / "table1.runs.csv"
    rows = ["row,column,run_id,seed,status"]
    rows += [f"GAT-Lip,Cora 0%,{r['run_id']},{r['config']['seed']},completed" for r in records]
    table.write_text("\n".join(rows) + "\n")
    out, cells = tmp_path / "verification.csv", tmp_path / "cells.csv"
    arguments = ("--cells", str(table), "--whole-cells", "--cell-out", str(cells))
    assert _verify(tmp_path / "runs", out, *arguments, "--only", "GAT-Lip, Cora 0%") == 0
    found = pd.read_csv(out, dtype={"run_id": str})
    assert sorted(found["run_id"]) == sorted(r["run_id"] for r in records)
    [cell] = pd.read_csv(cells).to_dict("records")
    assert (cell["row"], cell["column"], cell["seeds"]) == ("GAT-Lip", "Cora 0%", "100 101")
    assert cell["verdict"] == "identical" and cell["difference"] == 0.0
    assert cell["record_verdicts"] == "2 identical" and cell["margin"] == 2.0
    tests = [100 * r[schema.SUMMARY][schema.TEST_ACC_AT_BEST_VAL] for r in records]
    assert cell["recorded_mean"] == pytest.approx(sum(tests) / 2, abs=1e-3)
    assert "GAT-Lip, Cora 0%: identical (recorded" in capsys.readouterr().out
    # a cell the table does not hold, or --whole-cells without --cells: one line, exit 2
    assert _verify(tmp_path / "runs", out, *arguments, "--only", "GAT, Cora 0%") == 2
    assert "--only GAT, Cora 0%: no such cell in" in capsys.readouterr().err
    # --cells alone: the lowest seed of each cell --only names, and none of another
    other = run(make_cfg(*SMALL, "seed=102", "dataset.missing_rate=1.0"))[0]
    table.write_text(table.read_text() + f"GAT-Lip,Cora 100%,{other['run_id']},102,completed\n")
    lowest, fresh = ("--cells", str(table), "--dry-run"), tmp_path / "fresh.csv"
    assert _verify(tmp_path / "runs", fresh, *lowest, "--only", "GAT-Lip, Cora 100%") == 0
    assert capsys.readouterr().out.startswith("1 runs to verify")
    assert _verify(tmp_path / "runs", fresh, *lowest) == 0
    assert capsys.readouterr().out.startswith("2 runs to verify")
    assert _verify(tmp_path / "runs", fresh, *lowest, "--only", "GAT, Cora 0%") == 2
    assert "--only GAT, Cora 0%: no such cell in" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        _verify(tmp_path / "runs", out, "--run-id", records[0]["run_id"], "--whole-cells")
    assert stop.value.code == 2
