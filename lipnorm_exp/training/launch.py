"""``run(cfg)``: a configuration's runs, from config to records.

A configuration names one seed or a list of seeds (``seed=[0,1,2]``); each seed is a run, a
member of the launch (`Member`). The launch is validated, its
folders checked, the runs' locks taken (a second process given the same run waits for it), the runs
with a finished record skipped (this config's tags added to it); the others are built, resumed from
their checkpoints where saved (`lipnorm_exp.training.checkpoint`) and trained by one loop,
`fit`, over one of two epoch engines: one run alone
(`Alone`), or the seeds of a list together as stacked copies
(`Together`).

Each run keeps its best-validation epoch and ends after ``train.epochs``, on its early stop, or
as ``diverged`` at a non-finite loss or output (a result: deep unnormalised GATs explode),
keeping the epochs before it. An exception during training writes a ``failed`` record with the
error, a ``KeyboardInterrupt`` (Ctrl-C, or a stop signal, see `lipnorm_exp.util.stopping`) an
``interrupted`` one, and either is raised again; both keep the epochs so far, in the record and
in the checkpoint the next launch resumes from. Neither replaces a finished record of the run
([`save_record`][lipnorm_exp.records.save_record]).
"""

import time
from datetime import datetime, timezone
from functools import partial

import torch
from omegaconf import DictConfig, ListConfig
from tqdm.auto import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from lipnorm_exp.config import member_configs
from lipnorm_exp.records import run_id
from lipnorm_exp.records.schema import TRAIN_STEP_LOSS, VAL_ACC, Record
from lipnorm_exp.training.alone import Alone
from lipnorm_exp.training.engine import Engine
from lipnorm_exp.training.finished import LaunchedRecord, finished_record, run_locks
from lipnorm_exp.training.member import Member
from lipnorm_exp.training.prepare import prepare
from lipnorm_exp.training.state import NullTracker, TrackerFactory
from lipnorm_exp.training.threads import run_threads
from lipnorm_exp.training.together import Together, check_together
from lipnorm_exp.util.errors import ConfigError

__all__ = ["fit", "launch_records", "no_tracker", "run"]


def no_tracker(cfg: DictConfig, rid: str) -> NullTracker:
    """The tracker of ``logger=none``, and what `run` is given by default."""
    return NullTracker()


def check_tracker(cfg: DictConfig, tracker: TrackerFactory) -> None:
    """Refuse, before anything is loaded, a ``logger`` that `no_tracker` cannot serve.

    Raises:
        ConfigError: ``cfg`` names another logger and no tracker factory was given.
    """
    if tracker is no_tracker and cfg.logger.name != "none":
        raise ConfigError(
            f"logger.name={cfg.logger.name} needs its tracker: call "
            f"run(cfg, tracker=lipnorm_exp.cli.tracking.make_tracker), as the CLI does; "
            f"or logger=none"
        )


def run(cfg: DictConfig, desc: str = "", tracker: TrackerFactory = no_tracker) -> list[Record]:
    """Run the configuration ``cfg``: the records of its runs, one per seed, in seed order.

    A finished record of a run (same [`run_id`][lipnorm_exp.records.run_id], made by this preset
    or another) is reused rather than run again; the tags of ``cfg`` it lacks are added to it,
    so the record names every preset it serves. Which records were reused:
    `launch_records`.

    Args:
        cfg: the whole resolved config (see ``configs/config.yaml``); a list of seeds
            (``seed=[0,1,2]``) trains those runs together.
        desc: label of the progress bar and log lines (the sweep position, for instance).
        tracker: makes each run's tracker (the CLI passes
            `lipnorm_exp.cli.tracking.make_tracker`, which reads ``logger``).
    """
    return [launched.record for launched in launch_records(cfg, desc, tracker)]


def launch_records(
    cfg: DictConfig, desc: str = "", tracker: TrackerFactory = no_tracker
) -> list[LaunchedRecord]:
    """`run`'s records, each saying whether it was reused or trained now."""
    check_tracker(cfg, tracker)
    results_dir, device = prepare(cfg)
    together = isinstance(cfg.seed, ListConfig)
    if together:
        check_together(cfg)
    configs = member_configs(cfg)
    rids = [run_id(member) for member in configs]
    with run_locks(results_dir, rids, desc), run_threads(cfg):
        found = [
            finished_record(member, results_dir, rid, desc)
            for member, rid in zip(configs, rids, strict=True)
        ]
        todo = [k for k, record in enumerate(found) if record is None]
        members: dict[int, Member] = {}
        if todo:
            started, clock = datetime.now(timezone.utc), time.perf_counter()
            seeds = [int(configs[k].seed) for k in todo] if together else None
            members = {
                k: Member(configs[k], rids[k], results_dir, device, started, clock, tracker, seeds)
                for k in todo
            }
            train(list(members.values()), device, together, desc)
    return [
        LaunchedRecord(members[k].record, reused=False)
        if record is None
        else LaunchedRecord(record, reused=True)
        for k, record in enumerate(found)
    ]


def train(members: list[Member], device: torch.device, together: bool, desc: str = "") -> None:
    """Resume ``members`` from their checkpoints and train them.

    Each record is saved as its run ends, also on a stop or a failure.
    """
    for member in members:
        member.resume(desc)
    engine: Engine = Together(members, device) if together else Alone(device)
    fit(members, engine, time.perf_counter() - members[0].checkpoint.clock, desc)


def fit(members: list[Member], engine: Engine, setup_s: float = 0.0, desc: str = "") -> None:
    """Train ``members`` from the epoch after each one's last until each one's run ends.

    Each epoch, ``engine.epoch`` trains and evaluates the runs whose previous epoch is done (a
    run resumed further than others waits for them) and each takes its outcome; a run that
    ends is closed (its record saved), one that goes on keeps its state for its checkpoint. An
    exception closes every run still open with it, and is raised again.

    Args:
        members: the runs.
        engine: the epoch engine (`Engine`):
            `Alone` (one run) or
            `Together`.
        setup_s: seconds spent before training (data, model, resuming), for the records.
        desc: label of the progress bar and log lines.
    """
    train = members[0].state.train
    first = min(member.state.epoch for member in members) + 1
    bar = tqdm(
        range(first, train.epochs + 1),
        desc=desc,
        disable=not train.progress,
        leave=False,
        mininterval=1.0,
        initial=first - 1,
        total=train.epochs,
    )
    open_runs = list(members)
    # the console's log lines (a run's end) through the bar: each on a line of its own
    with logging_redirect_tqdm(tqdm_class=tqdm):
        try:
            for epoch in bar:
                active = [member for member in open_runs if member.state.epoch == epoch - 1]
                for member in active:
                    member.state.start_epoch()
                for member, outcome in zip(active, engine.epoch(active), strict=True):
                    member.take(epoch, outcome, partial(engine.lipschitz, member))
                for member in active:
                    if member.state.done:
                        open_runs.remove(member)
                        member.close(setup_s, desc)
                    else:
                        member.keep()
                bar.set_postfix(_progress(members))
                if not open_runs:
                    break
        except BaseException as error:
            for member in open_runs:
                member.close(setup_s, desc, error)
            raise
        finally:
            bar.close()


def _progress(members: list[Member]) -> dict[str, str]:
    """The progress bar's numbers.

    One run's last loss, validation and best validation accuracy, or how many of several runs
    still train.
    """
    if len(members) > 1:
        return {"training": str(sum(not member.state.done for member in members))}
    state = members[0].state
    if not state.history:
        return {}
    row = state.history[-1]
    shown = {"loss": f"{row[TRAIN_STEP_LOSS]:.3f}", "val": f"{row[VAL_ACC]:.3f}"}
    if state.best is not None:  # none until an epoch may be the best (may_be_best)
        shown["best"] = f"{state.best[VAL_ACC]:.3f}"
    return shown
