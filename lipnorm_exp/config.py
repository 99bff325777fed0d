"""Checks a config before anything runs; the resolvers its YAML files use.

What defines a run, and the hash that names it, are in :mod:`lipnorm_exp.records.identity`.
"""

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.errors import ConfigError


def project_root() -> str:
    """The checkout root when ``configs/`` sits beside the package, else the cwd."""
    root = Path(__file__).resolve().parents[1]
    return str(root) if (root / "configs").is_dir() else str(Path.cwd())


def register_resolvers() -> None:
    """``${lipnorm_root:}`` and ``${lipnorm_add:a,b}``, used by the YAML files."""
    if not OmegaConf.has_resolver("lipnorm_root"):
        OmegaConf.register_new_resolver("lipnorm_root", project_root)
    if not OmegaConf.has_resolver("lipnorm_add"):
        OmegaConf.register_new_resolver("lipnorm_add", lambda a, b: int(a) + int(b))


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


def validate(cfg: DictConfig) -> None:
    """Raise :class:`ConfigError` with one line naming the key and the allowed values."""
    from lipnorm_exp.data import DATASETS
    from lipnorm_exp.models import MODELS
    from lipnorm_exp.models.base import ACTIVATIONS
    from lipnorm_exp.norms import NORMS
    from lipnorm_exp.train import MONITORED

    accuracies = [name for name, higher in MONITORED.items() if higher]

    DATASETS.get(cfg.dataset.name)
    model_cls = MODELS.get(cfg.model.name)
    NORMS.get(cfg.norm.name)
    rate = cfg.dataset.get("missing_rate", 0.0)
    _require(0.0 <= rate <= 1.0, f"dataset.missing_rate must be in [0, 1], got {rate}")
    for key in ("depth", "hidden", "heads"):
        value = cfg.model.get(key, 1)
        _require(
            isinstance(value, int) and value >= 1,
            f"model.{key} must be an integer >= 1, got {value}",
        )
    width = cfg.model.input_width
    _require(
        width is None or (isinstance(width, int) and width >= 1),
        f"model.input_width must be null or an integer >= 1, got {width}",
    )
    _require(
        isinstance(cfg.model.last_activation, bool),
        f"model.last_activation must be true or false, got {cfg.model.last_activation}",
    )
    _require(
        isinstance(cfg.model.post_layernorm, bool),
        f"model.post_layernorm must be true or false, got {cfg.model.post_layernorm}",
    )
    _require(
        cfg.model.activation in ACTIVATIONS,
        f"model.activation must be one of {', '.join(ACTIVATIONS)}, got {cfg.model.activation}",
    )
    for key in ("dropout", "attn_dropout"):
        value = cfg.model.get(key, 0.0)
        _require(0.0 <= value < 1.0, f"model.{key} must be in [0, 1), got {value}")
    _require(cfg.train.epochs >= 1, f"train.epochs must be >= 1, got {cfg.train.epochs}")
    _require(cfg.train.lr > 0, f"train.lr must be > 0, got {cfg.train.lr}")
    every = cfg.train.get("lipschitz_every", 1)
    _require(every >= 1, f"train.lipschitz_every must be >= 1, got {every}")
    _require(
        cfg.train.scheduler in ("none", "plateau"),
        f"train.scheduler must be none or plateau, got {cfg.train.scheduler}",
    )
    factor = cfg.train.scheduler_factor
    _require(0 < factor < 1, f"train.scheduler_factor must be in (0, 1), got {factor}")
    _require(
        cfg.train.scheduler_patience >= 0,
        f"train.scheduler_patience must be >= 0, got {cfg.train.scheduler_patience}",
    )
    _require(cfg.train.patience >= 0, f"train.patience must be >= 0, got {cfg.train.patience}")
    for key, allowed in (("scheduler_metric", MONITORED), ("patience_metric", accuracies)):
        value = cfg.train[key]
        _require(value in allowed, f"train.{key} must be one of {', '.join(allowed)}, got {value}")
    _require(cfg.scale in ("quick", "paper"), f"scale must be quick or paper, got {cfg.scale}")
    model_cls.check_config(cfg.model, cfg.norm)
