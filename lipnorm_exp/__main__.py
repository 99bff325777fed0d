"""``python -m lipnorm_exp``: one run, or a sweep with ``--multirun`` / ``+experiment=<preset>``."""

import sys

import hydra
from omegaconf import DictConfig

from lipnorm_exp.config import register_resolvers
from lipnorm_exp.errors import ConfigError, DataNotFoundError
from lipnorm_exp.sweep import note_outcome, sweep_position
from lipnorm_exp.train import run

register_resolvers()


@hydra.main(version_base="1.3", config_path="../configs", config_name="config")
def main(cfg: DictConfig) -> None:
    """Train one configuration; a bad value or absent data ends it with one line."""
    position = sweep_position()
    try:
        note_outcome(run(cfg, desc=position))
    except (ConfigError, DataNotFoundError) as error:
        print(f"lipnorm_exp: error: {error}", file=sys.stderr)
        note_outcome(None, str(error))
        if not position:
            sys.exit(2)
        raise
    except Exception as error:
        note_outcome(None, f"{type(error).__name__}: {error}")
        raise


if __name__ == "__main__":
    main()
