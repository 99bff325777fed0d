"""Run identity across the config schema: every composition keeps the keys, values and types it
had, so the run ids (and the whole resolved config) are those computed before the schema existed.

The expected values were computed from the configs as they were before any schema checked them
(the TREES compositions under ``protocol=alon_yahav``: since that protocol takes each model's
block from Alon & Yahav's run scripts; the ``residual`` preset's paper-scale runs since its grid
states an early stop, ``grid.paper.patience``: no record had been made with the values before;
the ``gcnii`` preset's whole config since its paper grid's depths include every depth Table 2
reports, a change of the grid and not of any run id);
a change here means records already on disk would no longer be found by the runs that made them.
"""

import hashlib
import json

import pytest
from conftest import CONFIGS
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from lipnorm_exp.records import run_id

#: (command-line overrides, run id, hash of the whole resolved config but paths and logger)
CASES = [
    ([], "5f1506ed3a20fc72", "51965e0dd489d0be"),
    (
        ["model=gt", "norm=none", "model.depth=5", "dataset=citeseer", "dataset.missing_rate=1"],
        "ced2b17ab272dab6",
        "46cee8f5efc0e3dc",
    ),
    (
        [
            "protocol=published",
            "model.depth=20",
            "norm=none",
            "train.epochs=40",
            "train.track_gradients=true",
        ],
        "f89f3b66aaa28865",
        "ea3d08c5611939e8",
    ),
    (["model=gatv2", "norm=lip"], "f10e9eb768eaae31", "d30fdff50b36f73d"),
    (["model=gcn", "norm=pairnorm"], "9b6da85075d2d77b", "4f2296dadc0a4a83"),
    (["model=ggnn", "norm=layernorm"], "79cfb69704c77961", "2899ad1f8e3c5f2e"),
    (["model=gin", "norm=none"], "64eab55289aa51f6", "495630f37cbf5d0c"),
    (["model=gcnii", "norm=none"], "ceb51a92c193d040", "15c835fc5aa1cdc5"),
    (["model=gt", "norm=lip", "norm.variant=published"], "e299e4c62c1ce52d", "036a7d0b4ebe4cec"),
    (["dataset=trees"], "64626516892471f0", "ce6243057f59012c"),
    (
        ["dataset=trees", "dataset.depth=5", "model=gcn", "norm=none"],
        "31ac9fa10fd04fe6",
        "650ecacf093ef6d7",
    ),
    (
        ["dataset=trees", "protocol=standard", "model=gin", "norm=pairnorm"],
        "f9e0c45db47b4b13",
        "49fb9c3a8f201e87",
    ),
    (["dataset=ogbn_arxiv", "model=gat"], "b4c027654e988237", "a345193224b59629"),
    (["dataset=ogbn_proteins", "model=gt", "norm=lip"], "b400b764980cbf83", "977296675ad3c558"),
    (
        ["dataset=pubmed", "protocol=published", "+method=gat_lip_pub"],
        "b2adbb04d09b5fb2",
        "b29a20b4c24d7f3f",
    ),
    (
        ["+ablation=plateau", "+method=gat_lip", "protocol=published"],
        "2ead6a3dd0565e6d",
        "649eb338f0e97868",
    ),
    (
        ["+ablation=full_width_input", "+method=gat", "protocol=published", "model.depth=15"],
        "71d0828751799283",
        "b76a5f9a73dcad48",
    ),
    (
        ["logger=wandb", "seed=3", "tags=[a,b]", "force=true", "device=cpu"],
        "b890b21a00289d0a",
        "d80a45eef79a2dea",
    ),
    (
        ["train.estimate_lipschitz=true", "train.lipschitz_every=5", "train.scheduler=plateau"],
        "f4952d4c7a301690",
        "f7db3e0c1686951e",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+ablation=none",
            "+method=gat",
            "model.depth=10",
            "seed=0",
            "+experiment=ablation",
            "scale=quick",
        ],
        "3b547534e97428f4",
        "4106b0796d6c8ccd",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+ablation=no_attn_dropout",
            "+method=gat_lip",
            "model.depth=10",
            "seed=0",
            "+experiment=ablation",
            "scale=quick",
        ],
        "aab8d6097106a52d",
        "887479648346cb5b",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+ablation=full_width_input",
            "+method=gat_lip",
            "model.depth=10",
            "seed=0",
            "+experiment=ablation",
            "scale=quick",
        ],
        "845c1452c146d03e",
        "1b73435dff3af7d9",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+ablation=none",
            "+method=gat",
            "model.depth=15",
            "seed=0",
            "+experiment=ablation",
            "scale=paper",
        ],
        "4b275a5fba8594df",
        "5ed58beb11c7a9d4",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+ablation=no_attn_dropout",
            "+method=gat_lip",
            "model.depth=20",
            "seed=1",
            "+experiment=ablation",
            "scale=paper",
        ],
        "e9f7246c8dc0ece7",
        "1c1f62854eff39f0",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+ablation=full_width_input",
            "+method=gat_lip_pub",
            "model.depth=30",
            "seed=2",
            "+experiment=ablation",
            "scale=paper",
        ],
        "82097b0084ced07e",
        "b9cbec2a9754c5d8",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "model=gat",
            "norm=none",
            "model.depth=2",
            "seed=0",
            "+experiment=depth",
            "scale=quick",
        ],
        "dfd8360aeda4d218",
        "14efac2fc848e1e0",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "model=gt",
            "norm=none",
            "model.depth=2",
            "seed=0",
            "+experiment=depth",
            "scale=quick",
        ],
        "5fd891553c1b829c",
        "d135a88c35aebf3b",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "model=gt",
            "norm=lip",
            "model.depth=10",
            "seed=0",
            "+experiment=depth",
            "scale=quick",
        ],
        "58fbe8714cd7efca",
        "74ec203e33db3dc6",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "model=gat",
            "norm=none",
            "model.depth=2",
            "seed=0",
            "+experiment=depth",
            "scale=paper",
        ],
        "d166f9e177e4ce27",
        "61a3056c93d54bcd",
    ),
    (
        [
            "protocol=published",
            "dataset=ogbn_arxiv",
            "model=gat",
            "norm=none",
            "model.depth=2",
            "seed=0",
            "+experiment=depth",
            "scale=paper",
        ],
        "b25baef4dab45b4d",
        "4ca5dc85385b2d75",
    ),
    (
        [
            "protocol=published",
            "dataset=ogbn_proteins",
            "model=gt",
            "norm=lip",
            "model.depth=30",
            "seed=4",
            "+experiment=depth",
            "scale=paper",
        ],
        "b1cb276b1713d540",
        "edc882a20cd71113",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "+method=gat_lip",
            "model.depth=4",
            "seed=0",
            "+experiment=gcnii",
            "scale=quick",
        ],
        "c022a9c51af28555",
        "103b67151e72a5d2",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "+method=gcnii",
            "model.depth=4",
            "seed=0",
            "+experiment=gcnii",
            "scale=quick",
        ],
        "ce3563eeea7f26c0",
        "668b6d7671859b3f",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "+method=gcnii",
            "model.depth=16",
            "seed=0",
            "+experiment=gcnii",
            "scale=quick",
        ],
        "a60da7107a54644d",
        "d1e590a644af568a",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "+method=gat_lip",
            "model.depth=2",
            "seed=0",
            "+experiment=gcnii",
            "scale=paper",
        ],
        "0b862c0bdaacb8f2",
        "cb5d3c5ff3608569",
    ),
    (
        [
            "protocol=published",
            "dataset=pubmed",
            "+method=gcnii",
            "model.depth=2",
            "seed=0",
            "+experiment=gcnii",
            "scale=paper",
        ],
        "29cdb64199c2805b",
        "300aa2c51c56273e",
    ),
    (
        [
            "protocol=published",
            "dataset=ogbn_arxiv",
            "+method=gcnii",
            "model.depth=20",
            "seed=4",
            "+experiment=gcnii",
            "scale=paper",
        ],
        "55cfbf373c296de5",
        "56a6465f139c9e48",
    ),
    (
        [
            "protocol=standard",
            "+method=gat",
            "model.depth=20",
            "seed=0",
            "+experiment=gradients",
            "scale=quick",
        ],
        "6122b6c6440df6a6",
        "dd8a97d76a6b8103",
    ),
    (
        [
            "protocol=standard",
            "+method=gat_lip",
            "model.depth=20",
            "seed=0",
            "+experiment=gradients",
            "scale=quick",
        ],
        "b8d86486a554aecc",
        "22f307e16b65eb97",
    ),
    (
        [
            "protocol=standard",
            "+method=gat_lip",
            "model.depth=20",
            "seed=0",
            "+experiment=gradients",
            "scale=quick",
        ],
        "b8d86486a554aecc",
        "22f307e16b65eb97",
    ),
    (
        [
            "protocol=published",
            "+method=gat",
            "model.depth=20",
            "seed=0",
            "+experiment=gradients",
            "scale=paper",
        ],
        "a6f904b385c901ec",
        "fa00c5748960f8a1",
    ),
    (
        [
            "protocol=published",
            "+method=gat_lip",
            "model.depth=20",
            "seed=0",
            "+experiment=gradients",
            "scale=paper",
        ],
        "f106c0a2b4f456eb",
        "6b4c926b8d0845a2",
    ),
    (
        [
            "protocol=published",
            "+method=gat_lip",
            "model.depth=30",
            "seed=0",
            "+experiment=gradients",
            "scale=paper",
        ],
        "83a569c3c960971a",
        "1eff46c1848f21f7",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+method=gcn",
            "model.depth=2",
            "seed=0",
            "+experiment=missing_vector",
            "scale=quick",
        ],
        "e6e20ad42c1f7dda",
        "50a8083196a84ecb",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "dataset.missing_rate=1.0",
            "+method=gcn",
            "model.depth=2",
            "seed=0",
            "+experiment=missing_vector",
            "scale=quick",
        ],
        "7c9578a33c1f2372",
        "b2febe468f86e548",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "dataset.missing_rate=1.0",
            "+method=gat_lip",
            "model.depth=10",
            "seed=0",
            "+experiment=missing_vector",
            "scale=quick",
        ],
        "4d3b88325e00322b",
        "ae538a7ee41f25ec",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+method=gcn",
            "model.depth=1",
            "seed=0",
            "+experiment=missing_vector",
            "scale=paper",
        ],
        "a9be5e53808975af",
        "e07d85df25064b21",
    ),
    (
        [
            "protocol=published",
            "dataset=citeseer",
            "dataset.missing_rate=1.0",
            "+method=gcn",
            "model.depth=1",
            "seed=0",
            "+experiment=missing_vector",
            "scale=paper",
        ],
        "3222cd8da023021c",
        "99b1821ff121f686",
    ),
    (
        [
            "protocol=published",
            "dataset=pubmed",
            "dataset.missing_rate=1.0",
            "+method=gat_lip",
            "model.depth=20",
            "seed=4",
            "+experiment=missing_vector",
            "scale=paper",
        ],
        "2517335457a8190c",
        "a70526e2d057ae6b",
    ),
    (
        [
            "protocol=standard",
            "+method=gat",
            "model.depth=2",
            "seed=0",
            "+experiment=pubmed_depth",
            "scale=quick",
        ],
        "49d9ff0a01deb904",
        "5317b5d415d69889",
    ),
    (
        [
            "protocol=standard",
            "+method=gat_lip",
            "model.depth=2",
            "seed=0",
            "+experiment=pubmed_depth",
            "scale=quick",
        ],
        "1d3d395a61c2b752",
        "8451c89bb44cf94e",
    ),
    (
        [
            "protocol=standard",
            "+method=gat_lip",
            "model.depth=10",
            "seed=0",
            "+experiment=pubmed_depth",
            "scale=quick",
        ],
        "10ee7a05b3807e34",
        "ebaf2fdc32a95960",
    ),
    (
        [
            "protocol=published",
            "+method=gat",
            "model.depth=1",
            "seed=0",
            "+experiment=pubmed_depth",
            "scale=paper",
        ],
        "f432711029d1eb98",
        "13034dac8db8eede",
    ),
    (
        [
            "protocol=published",
            "+method=gat_lip",
            "model.depth=1",
            "seed=0",
            "+experiment=pubmed_depth",
            "scale=paper",
        ],
        "13ebeb71867c042e",
        "3c931001346ae3e2",
    ),
    (
        [
            "protocol=published",
            "+method=gat_lip",
            "model.depth=20",
            "seed=4",
            "+experiment=pubmed_depth",
            "scale=paper",
        ],
        "2517335457a8190c",
        "9e861a3ebce9c995",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "+method=gat",
            "model.depth=15",
            "seed=0",
            "+experiment=residual",
            "scale=quick",
        ],
        "a1cb6e65cab8122b",
        "463b298a70dd568f",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "+method=gat_lip",
            "model.depth=15",
            "seed=0",
            "+experiment=residual",
            "scale=quick",
        ],
        "0ff71e51468814b4",
        "f7172eafeb01c444",
    ),
    (
        [
            "protocol=standard",
            "dataset=cora",
            "+method=gat_lip_res",
            "model.depth=15",
            "seed=1",
            "+experiment=residual",
            "scale=quick",
        ],
        "27c216b0c90f8ca9",
        "c00fe232b950b71d",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "+method=gat",
            "model.depth=15",
            "seed=0",
            "+experiment=residual",
            "scale=paper",
        ],
        "ad83f6b5fd2e6417",
        "6238d9dea82d63b7",
    ),
    (
        [
            "protocol=published",
            "dataset=pubmed",
            "+method=gat",
            "model.depth=15",
            "seed=0",
            "+experiment=residual",
            "scale=paper",
        ],
        "2f19051fede475f5",
        "e6f064864ba28e25",
    ),
    (
        [
            "protocol=published",
            "dataset=pubmed",
            "+method=gat_lip_res",
            "model.depth=30",
            "seed=4",
            "+experiment=residual",
            "scale=paper",
        ],
        "d2350763b3644d14",
        "a3967465706231dd",
    ),
    (
        ["dataset.depth=2", "+method=gcn", "seed=0", "+experiment=trees", "scale=quick"],
        "32c9d00a256bffb4",
        "12300079f1d6a7e9",
    ),
    (
        ["dataset.depth=2", "+method=gat", "seed=0", "+experiment=trees", "scale=quick"],
        "7db4117536e092a5",
        "321f71d1d9adb7f9",
    ),
    (
        ["dataset.depth=2", "+method=gat_lip", "seed=0", "+experiment=trees", "scale=quick"],
        "e020a3fdf548ac78",
        "9917583fccedc92d",
    ),
    (
        ["dataset.depth=2", "+method=gcn", "seed=0", "+experiment=trees", "scale=paper"],
        "130d88b6bfc8d2dd",
        "e29f35032773a541",
    ),
    (
        ["dataset.depth=6", "+method=ggnn", "seed=5", "+experiment=trees", "scale=paper"],
        "f4f9cc1c424816a7",
        "ba1eea0fdc412b71",
    ),
    (
        ["dataset.depth=10", "+method=gat_lip", "seed=9", "+experiment=trees", "scale=paper"],
        "b675942f2d6ab0d2",
        "cfa4757dd931057a",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+method=gcn",
            "model.depth=1",
            "seed=0",
            "train.lr=0.1",
            "model.hidden=8",
            "++model.heads=1",
            "model.dropout=0.5",
            "+experiment=missing_vector",
            "scale=paper",
            "+search=supplementary",
        ],
        "26fa97aaa618d905",
        "137976fac230c96c",
    ),
    (
        [
            "protocol=published",
            "dataset=pubmed",
            "dataset.missing_rate=1.0",
            "+method=gat_lip",
            "model.depth=20",
            "seed=4",
            "train.lr=0.001",
            "model.hidden=128",
            "++model.heads=8",
            "model.dropout=0.0",
            "+experiment=missing_vector",
            "scale=paper",
            "+search=supplementary",
        ],
        "5f36199a5fe8ff49",
        "8781e4a365725510",
    ),
    (
        [
            "protocol=published",
            "dataset=cora",
            "dataset.missing_rate=0.0",
            "+method=gcn",
            "model.depth=1",
            "seed=0",
            "train.lr=0.1",
            "model.hidden=8",
            "++model.heads=2",
            "model.dropout=0.0",
            "+experiment=missing_vector",
            "scale=paper",
            "+search=supplementary",
        ],
        "6a79b21593681f83",
        "d426bd73697127c6",
    ),
]


#: keys added or changed since the pins, none of which defines a run (``seeds_per_job``: how a
#: preset's sweep groups its seeds into jobs; ``train.checkpoint_every``: how often a run saves its
#: state; ``train.threads``: on how many threads it computes, which its record's machine names;
#: ``model.message_path`` and ``dataset.feature_layout``: how a run computes, which its numerics
#: version names)
ADDED_SINCE = (
    "seeds_per_job",
    "train.checkpoint_every",
    "train.threads",
    "rerun_stale",
    "model.message_path",
    "dataset.feature_layout",
)
#: keys added since the pins that define a run, at the value every pinned composition has, and
#: another value (``train.conv_weight_decay``: null, the weight decay everywhere; the reporting
#: rule of every protocol before ``protocol=authors``: the best validation epoch, the sample std)
DEFINING_ADDED_SINCE = {
    "train.conv_weight_decay": (None, 0.01),
    "protocol.reported_epoch": ("best_val", "final"),
    "protocol.std_ddof": (1, 0),
}


def whole_config_hash(cfg) -> str:
    container = OmegaConf.to_container(cfg, resolve=True)
    for key in ("paths", "hydra", "logger", *ADDED_SINCE, *DEFINING_ADDED_SINCE):
        *parents, name = key.split(".")
        node = container
        for parent in parents:
            node = node[parent]
        before = DEFINING_ADDED_SINCE[key][0] if key in DEFINING_ADDED_SINCE else None
        assert key not in DEFINING_ADDED_SINCE or node.get(name, before) == before
        node.pop(name, None)
    return hashlib.sha256(json.dumps(container, sort_keys=True).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def composed():
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        yield lambda overrides: compose("config", overrides=overrides)


@pytest.mark.parametrize(("overrides", "expected_id", "expected_whole"), CASES)
def test_a_composition_keeps_its_run_id_and_values(
    composed, overrides, expected_id, expected_whole
):
    cfg = composed(overrides)
    assert run_id(cfg) == expected_id
    assert whole_config_hash(cfg) == expected_whole


def test_keys_added_since_do_not_define_a_run(composed):
    plain = composed([])
    for key in ADDED_SINCE:
        assert run_id(composed([f"{key}=4"])) == run_id(plain)


def test_a_defining_key_added_since_keeps_the_old_ids_at_its_old_value_only(composed):
    plain = composed([])
    for key, (before, other) in DEFINING_ADDED_SINCE.items():
        group, name = key.split(".")
        recorded_before = OmegaConf.to_container(plain, resolve=True)
        assert recorded_before[group].pop(name) == before
        assert run_id(recorded_before) == run_id(plain)  # a record made before the key existed
        assert run_id(composed([f"{key}={other}"])) != run_id(plain)
