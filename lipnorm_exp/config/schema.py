"""The keys of every config group, their types and their limits: the schema of ``configs/``.

One dataclass per group option (``configs/<group>/<option>.yaml``), its fields the keys that
option has once composed. Values come from the YAML files alone (the schema holds no default):
`lipnorm_exp.config.validate` checks a composed config against `Config`, key by
key and in field order, so a key whose value another one interpolates (``scale`` for
``train.epochs``, ``dataset.depth`` for the TREES model's depth) is checked first.

Groups whose keys depend on the option (``dataset``, ``model``, ``norm``, ``logger``) map each
``name`` to its dataclass through `ByName`. Keys marked
`MAY_BE_ABSENT` are set by some compositions only (a
protocol's tables, a preset's grid, an ablation).

Why these dataclasses are not registered in Hydra's ``ConfigStore`` as structured configs:
OmegaConf 2.3 checks a structured config's types only (``model.depth=-3`` passes as an
``Annotated[int, AtLeast(1)]``), cannot type a union (``seed``: one seed or a list of them;
``Positive | None``), and says a wrong type in a multi-line ``ValidationError``. The project's
guarantee is one line naming the key, the value and the allowed values, ranges included, so
`validate` checks the composed config against these dataclasses
instead; they stay the one description of the keys.
"""

from dataclasses import dataclass, fields
from typing import Annotated, Any, get_type_hints

from lipnorm_exp.config.location import option_names
from lipnorm_exp.data import DATASETS as DATASET_LOADERS
from lipnorm_exp.data import FEATURE_LAYOUTS, MONITORED, TREES_MAX_DEPTH
from lipnorm_exp.models import ACTIVATIONS
from lipnorm_exp.models.norms import NORMS as NORM_CLASSES
from lipnorm_exp.util.constraints import (
    MAY_BE_ABSENT,
    AtLeast,
    Between,
    ByName,
    Dropout,
    Folder,
    Fraction,
    Matches,
    NonNegative,
    NonNegativeNumber,
    OneOf,
    Positive,
    PositiveNumber,
    may_be_absent,
)
from lipnorm_exp.util.variants import MESSAGE_PATHS

#: ``train.threads``: chosen per dataset (`lipnorm_exp.training.threads`)
AUTO = "auto"

#: the epoch whose test accuracy a protocol reports (``protocol.reported_epoch``): the one of the
#: best validation accuracy, or the last one trained
BEST_VAL_EPOCH, FINAL_EPOCH = "best_val", "final"
REPORTED_EPOCHS = (BEST_VAL_EPOCH, FINAL_EPOCH)

__all__ = [
    "AUTO",
    "BEST_VAL_EPOCH",
    "FINAL_EPOCH",
    "REPORTED_EPOCHS",
    "DATASETS",
    "LOGGERS",
    "MODELS",
    "NORMS",
    "AttentionModel",
    "Config",
    "model_schema",
    "Model",
    "unread_model_keys",
    "Paths",
    "SCHEMA_OF_CLASS",
    "SCHEMA_OF_LOADER",
    "Protocol",
    "Train",
]

Absent = MAY_BE_ABSENT
#: a run's seed (a list of them trains those runs together: `lipnorm_exp.training.together`)
Seed = Annotated[int, Between(0, 2**32 - 1)]
#: the monitored columns an early stop may watch (it stops once one reaches 1)
ACCURACIES = tuple(name for name, higher in MONITORED.items() if higher)


@dataclass
class Planetoid:
    """``configs/dataset/{cora,citeseer,pubmed}.yaml``."""

    name: str
    missing_rate: Fraction
    normalize_features: bool
    feature_layout: Annotated[str, OneOf(FEATURE_LAYOUTS)]
    download: bool


@dataclass
class Trees:
    """``configs/dataset/trees.yaml``."""

    name: str
    depth: Annotated[int, Between(1, TREES_MAX_DEPTH)]
    num_trees: Positive
    train_fraction: Annotated[float, Between(0, 1, open_low=True)]
    batch_size: Positive
    passes_per_epoch: Positive
    seed: NonNegative
    download: bool


@dataclass
class OgbnArxiv:
    """``configs/dataset/ogbn_arxiv.yaml``."""

    name: str
    to_undirected: bool
    missing_rate: Fraction
    download: bool
    meta_dict: dict | None


@dataclass
class OgbnProteins:
    """``configs/dataset/ogbn_proteins.yaml``."""

    name: str
    loader: Annotated[str, OneOf(("auto", "neighbor", "random_nodes"))]
    num_parts: Positive
    batch_size: Positive
    num_neighbors: list[Annotated[int, AtLeast(-1)]]
    eval_batches: Annotated[str, OneOf(("batched", "full"))]
    eval_num_parts: Positive
    download: bool
    meta_dict: dict | None


#: the schema of each dataset loader's config, by where the loader is defined (a loader may
#: serve several names: Planetoid)
SCHEMA_OF_LOADER = {
    "lipnorm_exp.data.planetoid.load_planetoid": Planetoid,
    "lipnorm_exp.data.trees.load_trees": Trees,
    "lipnorm_exp.data.ogb.load_ogbn_arxiv": OgbnArxiv,
    "lipnorm_exp.data.ogb.load_ogbn_proteins": OgbnProteins,
}
#: one schema per registered dataset (``dataset.name``), derived from the dataset registry
#: without importing a loader
DATASETS = {name: SCHEMA_OF_LOADER[DATASET_LOADERS.where(name)] for name in DATASET_LOADERS}


@dataclass
class Model:
    """``configs/model/{gcn,ggnn}.yaml``: the keys every model has.

    The attention keys may be present too: the published protocol sets them for every model
    and the supplementary search sweeps ``model.heads``; models without attention ignore them.
    """

    name: str
    depth: Positive
    hidden: Positive
    dropout: Dropout
    residual: bool
    input_width: Positive | None
    activation: Annotated[str, OneOf(tuple(ACTIVATIONS))]
    last_activation: bool
    post_layernorm: bool
    head_channels: Annotated[Positive | None, Absent]
    heads: Annotated[Positive, Absent]
    concat: Annotated[bool, Absent]
    attn_dropout: Annotated[Dropout, Absent]
    message_path: Annotated[str, OneOf(MESSAGE_PATHS), Absent]


@dataclass
class AttentionModel(Model):
    """``configs/model/{gat,gatv2}.yaml``: heads and attention dropout are required."""

    head_channels: Positive | None
    heads: Positive
    concat: bool
    attn_dropout: Dropout
    message_path: Annotated[str, OneOf(MESSAGE_PATHS)]


@dataclass
class GT(AttentionModel):
    """``configs/model/gt.yaml``."""

    beta: bool


@dataclass
class GIN(Model):
    """``configs/model/gin.yaml``."""

    train_eps: bool
    batch_norm: bool


@dataclass
class GCNII(Model):
    """``configs/model/gcnii.yaml``."""

    alpha: Fraction
    theta: PositiveNumber


#: the schema of the model classes that bring keys of their own, by where each class is
#: defined; every other model class has the schema of its nearest base class here
#: (`model_schema`)
SCHEMA_OF_CLASS: dict[str, type] = {
    "lipnorm_exp.models.base.DepthwiseGNN": Model,
    "lipnorm_exp.models.attention.AttentionGNN": AttentionModel,
    "lipnorm_exp.models.gt.GT": GT,
    "lipnorm_exp.models.gin.GIN": GIN,
    "lipnorm_exp.models.gcnii.GCNII": GCNII,
}


def model_schema(model_class: type) -> type:
    """The schema of ``model_class``'s config: its own, or its nearest base class's."""
    where = (f"{cls.__module__}.{cls.__qualname__}" for cls in model_class.__mro__)
    return next(SCHEMA_OF_CLASS[path] for path in where if path in SCHEMA_OF_CLASS)


#: one schema per registered model (``model.name``): `model_schema` of its class, written
#: out so that a config is checked without importing the model classes (and torch);
#: ``tests/config/test_config.py`` checks the two agree
MODELS = {
    "gat": AttentionModel,
    "gatv2": AttentionModel,
    "gcn": Model,
    "gcnii": GCNII,
    "ggnn": Model,
    "gin": GIN,
    "gt": GT,
}


def unread_model_keys(name: str) -> tuple[str, ...]:
    """The keys of the ``model`` group that model ``name`` does not read, in schema order.

    Those its schema (`MODELS`) marks `MAY_BE_ABSENT`: the attention keys of a model without
    attention, which a protocol may set for every model. `lipnorm_exp.config.build.build_model`
    leaves them out of the model's arguments; `lipnorm_exp.config.rules.given_keys_are_read`
    refuses them on a command line.
    """
    schema = MODELS[name]
    hints = get_type_hints(schema, include_extras=True)
    return tuple(field.name for field in fields(schema) if may_be_absent(hints[field.name]))


#: one schema per registered normalisation (``norm.name``): its class, a dataclass of its keys
NORMS = {name: NORM_CLASSES.get(name) for name in NORM_CLASSES}


@dataclass
class Train:
    """``configs/train/default.yaml``."""

    epochs: Positive
    lr: PositiveNumber
    weight_decay: NonNegativeNumber
    conv_weight_decay: NonNegativeNumber | None
    scheduler: Annotated[str, OneOf(("none", "plateau"))]
    scheduler_metric: Annotated[str, OneOf(tuple(MONITORED))]
    scheduler_factor: Annotated[float, Between(0, 1, open_low=True, open_high=True)]
    scheduler_patience: NonNegative
    patience: NonNegative
    patience_metric: Annotated[str, OneOf(ACCURACIES)]
    track_gradients: bool
    estimate_lipschitz: bool
    lipschitz_every: Positive
    progress: bool
    checkpoint_every: NonNegative
    #: torch's threads: ``auto`` (`lipnorm_exp.training.threads`) or a number; absent from
    #: records made before it existed
    threads: Annotated[Positive | Annotated[str, OneOf((AUTO,))], Absent]


@dataclass
class Protocol:
    """``configs/protocol/*.yaml``: a protocol's name and the tables other groups read."""

    #: the option that set the group (its file's name), as every named group's ``name``: the
    #: report files its tables under it, so another value would misname them or leave the folder
    name: Annotated[str, OneOf(option_names("protocol"))]
    #: the epoch whose test accuracy a table reports: the best validation one, or the last
    reported_epoch: Annotated[str, OneOf(REPORTED_EPOCHS), Absent]
    #: the std over seeds a table reports: 1, the sample std; 0, the population std (np.std)
    std_ddof: Annotated[int, OneOf((0, 1)), Absent]
    heads: Annotated[Positive, Absent]
    gin_batch_norm: Annotated[bool, Absent]
    normalize_features: Annotated[bool, Absent]
    feature_dropout: Annotated[dict[str, Dropout], Absent]
    trees_per_depth: Annotated[dict[str, Positive], Absent]
    batch_size_per_depth: Annotated[dict[str, Positive], Absent]
    passes_per_depth: Annotated[dict[str, Positive], Absent]
    #: per model name (and ``default``): the model keys of its layer block, checked there
    block_per_model: Annotated[dict[str, dict[str, Any]], Absent]


@dataclass
class NoLogger:
    """``configs/logger/none.yaml``."""

    name: str


@dataclass
class Wandb:
    """``configs/logger/wandb.yaml``."""

    name: str
    project: str
    entity: str | None
    mode: Annotated[str, OneOf(("online", "offline", "disabled"))] | None
    group: str | None
    heatmap_every: NonNegative


LOGGERS = {"none": NoLogger, "wandb": Wandb}

FolderPath = Annotated[str, Folder()]
#: a label of a run, stored in its record and given to W&B as a tag (which takes 64 at most)
Tag = Annotated[str, Matches(r"[^\n]{1,64}", "a label of 1 to 64 characters on one line")]


@dataclass
class Paths:
    """``configs/paths/default.yaml``."""

    root_dir: FolderPath
    data_dir: FolderPath
    raw_dirs: list[FolderPath]
    results_dir: FolderPath
    log_dir: FolderPath


@dataclass
class Ablation:
    """``configs/ablation/*.yaml``: which factor of the protocol a run changes."""

    name: str
    factor: str


#: ``scale``'s values: which grid and budget a preset runs (``grid.<scale>``)
SCALES = ("quick", "paper")


@dataclass
class Config:
    """``configs/config.yaml`` composed: top-level keys, then the groups in dependency order."""

    seed: Seed | list[Seed]
    seeds_per_job: Annotated[Positive, Absent]  # absent from records made before it existed
    scale: Annotated[str, OneOf(SCALES)]
    force: bool
    rerun_stale: Annotated[bool, Absent]  # absent from records made before it existed
    device: Annotated[str, Matches(r"auto|cpu|cuda(:\d+)?", "auto, cpu, cuda or cuda:<index>")]
    tags: list[Tag]
    protocol: Protocol
    dataset: Annotated[Any, ByName(DATASETS)]
    model: Annotated[Model, ByName(MODELS)]
    norm: Annotated[Any, ByName(NORMS)]
    train: Train
    logger: Annotated[Any, ByName(LOGGERS)]
    paths: Paths
    ablation: Annotated[Ablation, Absent]
    grid: Annotated[dict, Absent]
