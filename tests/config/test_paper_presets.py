"""The paper presets: one entry each, beside its YAML, owning its outputs and reading its budget
from the YAML; claims name models by configuration, so a renamed label changes their text and
never their verdict, and a configuration no label maps to fails loudly."""

import shutil
import subprocess

import pytest
from conftest import CONFIGS, REPO

from lipnorm_exp.config import preset_names
from lipnorm_exp.config.help import preset_help
from lipnorm_exp.models.norms import NORMS
from lipnorm_exp.records.labels import ModelConfig, model_label
from lipnorm_exp.report import claims, grids
from lipnorm_exp.report.frame import load_records
from lipnorm_exp.report.grids import Budget, paper_budget
from lipnorm_exp.report.paper_presets import PRESETS, owned_figures, owned_tables
from lipnorm_exp.report.scorecard import budget_text, claim_lines, scorecard
from lipnorm_exp.report.verdicts import NOT_RUN
from lipnorm_exp.util.errors import ConfigError


def test_every_preset_file_has_one_entry_and_every_entry_a_file():
    names = [preset.name for preset in PRESETS]
    assert len(set(names)) == len(names)
    assert sorted(names) == list(preset_names())
    assert preset_names() == tuple(
        sorted(path.stem for path in (CONFIGS / "experiment").glob("*.yaml"))
    )


def test_help_lists_every_preset_file():
    listed = [line.split()[0] for line in preset_help().splitlines()]
    assert listed == list(preset_names())


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_reproduce_runs_every_preset_file():
    shown = subprocess.run(
        ["make", "-n", "reproduce"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    [loop] = [line for line in shown.splitlines() if line.startswith("for preset in ")]
    assert loop.removeprefix("for preset in ").split(";")[0].split() == list(preset_names())


def test_every_output_has_one_owner_and_its_own_file_stem():
    tables = [table.name for _, table in owned_tables()]
    figures = [figure.name for _, figure in owned_figures()]
    claimed = [claim for preset in PRESETS for claim in preset.claims]
    for outputs in (tables, figures, claimed):
        assert len(set(outputs)) == len(outputs)
    assert {"table1_missing_vector", "table2_gcnii", "table3_residual"} <= set(tables)


@pytest.mark.parametrize(
    ("preset", "budget"),
    [
        ("missing_vector", Budget(1000, 5)),
        ("gradients", Budget(100, 1)),
        ("trees", Budget(500, 10)),
        ("ablation", Budget(200, 3)),
    ],
)
def test_a_presets_budget_is_its_grid_paper(preset, budget):
    assert paper_budget(preset) == budget


def test_a_changed_grid_paper_changes_the_budget_the_scorecard_states(tmp_path, monkeypatch):
    assert budget_text() == "1000 epochs and 5 seeds, 10 for TREES"
    configs = shutil.copytree(CONFIGS, tmp_path / "configs")
    experiments = configs / "experiment"
    for name, old, new in (
        ("missing_vector", "    seeds: range(5)\n", "    seeds: range(3)\n"),
        ("gcnii", "    epochs: 1000\n", "    epochs: 300\n"),
        ("trees", "    seeds: range(10)\n", "    seeds: range(4)\n"),
    ):
        text = (experiments / f"{name}.yaml").read_text()
        assert text.count(old) == 1, name
        (experiments / f"{name}.yaml").write_text(text.replace(old, new))
    monkeypatch.setattr(grids, "CONFIGS_DIR", configs)
    assert paper_budget("missing_vector") == Budget(1000, 3)
    assert paper_budget("gcnii") == Budget(300, 5)
    expected = (
        "1000 epochs and 3 seeds, 300 epochs and 5 seeds for Table 2, 5 for Table 3, 4 for TREES"
    )
    assert budget_text() == expected


@pytest.fixture(scope="module")
def committed():
    return load_records(REPO / "results" / "runs")


#: the presets whose claims take their labels when their lines are made
CLAIMED = [preset for preset in PRESETS if preset.name in ("gradients", "depth")]


def test_a_renamed_label_changes_a_claims_text_never_its_verdict(committed, monkeypatch, tmp_path):
    before = [line for preset in CLAIMED for line in claim_lines(committed, preset)]
    assert {line.verdict for line in before} - {NOT_RUN}
    lip = NORMS.get("lip")
    monkeypatch.setattr(lip, "label_suffix", staticmethod(lambda options: "-Lipschitz"))
    # the grids, composed once per configs folder, composed again under the new label
    monkeypatch.setattr(grids, "CONFIGS_DIR", shutil.copytree(CONFIGS, tmp_path / "configs"))
    renamed = committed.assign(label=committed["config"].map(model_label))
    assert "GAT-Lipschitz" in set(renamed["label"]) and "GAT-Lip" not in set(renamed["label"])
    after = [line for preset in CLAIMED for line in claim_lines(renamed, preset)]
    assert [line.verdict for line in after] == [line.verdict for line in before]
    assert [line.runs for line in after] == [line.runs for line in before]
    changed = [(b.subject, a.subject) for b, a in zip(before, after, strict=True)]
    assert any("GAT-Lip," in old and "GAT-Lipschitz," in new for old, new in changed)


@pytest.mark.parametrize("runs", ["none", "committed"])
def test_a_claim_on_a_model_no_label_maps_to_fails_loudly(committed, monkeypatch, runs):
    monkeypatch.setattr(claims, "GAT_LIP", ModelConfig("gat", "lipschitz"))
    frame = committed if runs == "committed" else committed.iloc[:0]
    with pytest.raises(ConfigError, match="norm.name: unknown value 'lipschitz'; allowed: "):
        scorecard(frame)
    with pytest.raises(ConfigError, match="model.name: unknown value 'gatt'"):
        _ = ModelConfig("gatt", "lip").label
