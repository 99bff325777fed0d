"""The report's row of a run (`lipnorm_exp.report.run_row`): one name per column, the column lists
read from its declaration, and `record_row` makes rows of it; a scorecard line's rule is a field
of its own, which the CSV file states in the line's subject and the Markdown in its details."""

from test_report import make_record

from lipnorm_exp.records.schema import SUMMARY_KINDS, Kind, Summary
from lipnorm_exp.report import run_row
from lipnorm_exp.report.frame import record_row, records_frame
from lipnorm_exp.report.run_row import (
    COLUMNS,
    CONFIG_KEYS,
    NUMERIC_COLUMNS,
    ConfigColumns,
    LastEpoch,
    RecordColumns,
    RunRow,
)
from lipnorm_exp.report.scorecard import Provenance, markdown, table
from lipnorm_exp.report.verdicts import HOLDS, ScoreLine


def column_names() -> dict[str, list[str]]:
    """Each column that `run_row` names → the names of its constants there."""
    names: dict[str, list[str]] = {}
    for name, value in vars(run_row).items():
        if name.isupper() and isinstance(value, str):
            names.setdefault(value, []).append(name)
    return names


def test_every_column_has_exactly_one_name_and_every_name_is_a_column():
    names = column_names()
    assert set(names) == set(RunRow.__annotations__)
    assert {column: found for column, found in names.items() if found != [column.upper()]} == {}


def test_the_columns_are_the_declarations_in_order():
    parts = (RecordColumns, ConfigColumns, Summary, LastEpoch)
    inherited = [key for part in parts for key in part.__annotations__]
    own = [key for key in RunRow.__annotations__ if key not in inherited]
    assert COLUMNS == (*inherited, *own)
    assert list(CONFIG_KEYS) == list(ConfigColumns.__annotations__)


def test_a_record_row_holds_every_column_and_the_frame_its_numbers_as_floats():
    row = record_row(make_record(), "runs/a.json")
    assert tuple(row) == COLUMNS
    read = (row[run_row.DATASET], row[run_row.DEPTH], row[run_row.PATH])
    assert read == ("cora", 2, "runs/a.json")
    frame = records_frame([row, record_row(make_record(seed=1, residual=True), "runs/b.json")])
    assert all(frame[column].dtype == float for column in NUMERIC_COLUMNS)
    assert frame[run_row.RESIDUAL].tolist() == [False, True]
    summary_numbers = {key for key, kind in SUMMARY_KINDS.items() if kind is not Kind.NAME}
    assert summary_numbers < set(NUMERIC_COLUMNS)
    assert {run_row.SEED, run_row.LR, run_row.FINAL_TEST_ACC} < set(NUMERIC_COLUMNS)
    assert not {run_row.RESIDUAL, run_row.CONCAT, run_row.LABEL} & set(NUMERIC_COLUMNS)


def test_a_config_key_a_record_lacks_reads_as_its_default():
    record = make_record()
    del record["config"]["protocol"]
    row = record_row(record)
    read = (row[run_row.PROTOCOL], row[run_row.REPORTED_EPOCH], row[run_row.STD_DDOF])
    assert read == ("standard", "best_val", 1)
    assert row[run_row.TREE_DEPTH] is None and row[run_row.ABLATION] is None


def test_a_claims_rule_is_stated_in_the_csv_subject_and_in_the_details():
    claim = ScoreLine("Fig. 9", "GAT, Cora: learns", "learns", "yes", HOLDS, rule="best ≥ 50%")
    number = ScoreLine("Table 9", "GAT, Cora 0%", "80.0", "81.0", HOLDS)
    lines, marks = [claim, number], [Provenance("", True, "")] * 2
    subjects = table(lines, marks)["subject"].tolist()
    assert subjects == ["GAT, Cora: learns (rule: best ≥ 50%)", "GAT, Cora 0%"]
    text = markdown(lines, marks, "")
    assert "| GAT, Cora: learns |" in text and "(rule:" not in text
    assert "**1. Fig. 9: GAT, Cora: learns**\n- rule: best ≥ 50%\n" in text
    assert text.count("- rule: ") == 1
