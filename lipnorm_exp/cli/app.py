"""The ``lipnorm-exp`` command's Hydra application: a run, or a sweep (``--multirun``, a preset).

``lipnorm-exp`` and ``python -m lipnorm_exp`` reach `console` through
`lipnorm_exp.cli.console.lipnorm_exp`, which answers ``--version`` and a missing ``app`` extra
before this module imports Hydra.
"""

import os
import sys

import hydra
from omegaconf import DictConfig, ListConfig

from lipnorm_exp.cli.closing import closing_line
from lipnorm_exp.cli.errors import (
    ERROR_PREFIX,
    EXIT_INTERRUPTED,
    JobError,
    full_error_wanted,
    interruption,
    say,
    stop,
)
from lipnorm_exp.cli.hydra_refusals import HydraRefusals
from lipnorm_exp.config import register_resolvers, search_path
from lipnorm_exp.config.launcher import quiet_schema_matching
from lipnorm_exp.config.validate import drop_empty_local
from lipnorm_exp.records import FAILED, INTERRUPTED
from lipnorm_exp.records.schema import RUN_ID
from lipnorm_exp.sweeps.plugins import register_plugins
from lipnorm_exp.sweeps.progress import note_outcome, outcome_of, sweep_position
from lipnorm_exp.training.finished import LaunchedRecord, reused_records
from lipnorm_exp.util.errors import ConfigError, UserError
from lipnorm_exp.util.stopping import in_sweep_worker, stop_requests

register_resolvers()
register_plugins()
quiet_schema_matching()
#: Hydra's refusals of this command line, in one line (`lipnorm_exp.cli.hydra_refusals`)
REFUSALS = HydraRefusals(sys.argv[1:])


@hydra.main(version_base="1.3", config_path=search_path(), config_name="config")
def main(cfg: DictConfig) -> None:
    """Train one configuration; a bad value, absent data or a stop request end it in one line.

    A run outside a sweep ends on a line naming its record and what to compare it with
    (`closing_line`).

    In a sweep, a job that cannot run is counted as failed and the sweep goes on (Hydra shows
    its line again at the end); a stop request ends the sweep, a worker process at once.
    The trainer (and torch with it) is imported here, once a run is to train: the command
    line's help, its config, its refusals and a job whose runs all have a finished record
    (`reused_records`) answer without it.
    """
    REFUSALS.start_task()
    drop_empty_local(cfg)
    unswept = unswept_grid()
    if unswept:
        stop(ConfigError(unswept))
    position = sweep_position()
    runs = len(cfg.seed) if isinstance(cfg.seed, ListConfig) else 1
    with stop_requests():
        try:
            launched = reused_records(cfg, desc=position) or train(cfg, position)
            for record, reused in launched:
                note_outcome(outcome_of(record, reused), run_id=record[RUN_ID])
            if not position:  # a sweep ends on its tally instead
                say(closing_line(launched, cfg.paths.results_dir))
        except UserError as error:
            note_outcome(FAILED, str(error), runs)
            if not position:
                stop(error)
            if full_error_wanted():
                raise
            say(f"{ERROR_PREFIX}{error}")
            raise JobError(f"{ERROR_PREFIX}{error}") from None
        except KeyboardInterrupt as stop_request:
            note_outcome(INTERRUPTED, str(stop_request) or "Ctrl-C", runs)
            say(f"{interruption(stop_request)} {position}".rstrip())
            if in_sweep_worker():
                sys.stdout.flush()
                os._exit(EXIT_INTERRUPTED)  # its sweep is gone or stopping: nothing to return to
            sys.exit(EXIT_INTERRUPTED)
        except Exception as error:
            note_outcome(FAILED, f"{type(error).__name__}: {error}", runs)
            raise


def unswept_grid() -> str | None:
    """Why a single run was asked for with a sweeper grid (``+search=...``), or ``None``.

    Without ``--multirun`` Hydra drops ``hydra.sweeper.params`` and makes one run at the
    defaults, which would be recorded as if searched.
    """
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hydra_config = HydraConfig.get()
    swept = list(hydra_config.sweeper.get("params") or {})
    if hydra_config.mode != RunMode.RUN or not swept:
        return None
    return (
        f"hydra.sweeper.params sweeps {', '.join(swept)} (+search=...), which one run cannot; "
        "allowed: --multirun, or a preset (+experiment=...) that sweeps"
    )


def train(cfg: DictConfig, position: str) -> list[LaunchedRecord]:
    """The records of ``cfg``'s runs, those not finished trained now (torch imported here)."""
    from lipnorm_exp.cli.tracking import make_tracker
    from lipnorm_exp.training.launch import launch_records

    return launch_records(cfg, desc=position, tracker=make_tracker)


def console() -> None:
    """``lipnorm-exp`` and ``python -m lipnorm_exp``: `main`, its refusals in one line.

    Hydra's refusals of the command line, like the project's, and a stop request end in one line.
    """
    try:
        with REFUSALS.installed():
            main()
    except KeyboardInterrupt as stop_request:  # a sweep stopped between or around its jobs
        if full_error_wanted():
            raise
        say(interruption(stop_request))
        sys.exit(EXIT_INTERRUPTED)
