"""The custom resolvers the YAML files use, and the root they resolve paths against."""

from pathlib import Path

from omegaconf import OmegaConf


def project_root() -> str:
    """The checkout root when ``configs/`` sits beside the package, else the cwd."""
    root = Path(__file__).resolve().parents[2]
    return str(root) if (root / "configs").is_dir() else str(Path.cwd())


def register_resolvers() -> None:
    """``${lipnorm_root:}`` and ``${lipnorm_add:a,b}``, used by the YAML files."""
    if not OmegaConf.has_resolver("lipnorm_root"):
        OmegaConf.register_new_resolver("lipnorm_root", project_root)
    if not OmegaConf.has_resolver("lipnorm_add"):
        OmegaConf.register_new_resolver("lipnorm_add", lambda a, b: int(a) + int(b))
