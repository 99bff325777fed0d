"""One run of a launch, from its config to its record: `Member`.

A launch ([`lipnorm_exp.training.launch.run`][lipnorm_exp.training.launch.run]) trains the runs of
its seeds, one alone or several together; each is a member. A member is made exactly as the run
would be made alone (seed everything, load the task, build the model), then resumed from the run's
checkpoint where one is saved (`lipnorm_exp.training.checkpoint`). The training loop hands it each
epoch's outcome (`Member.take`), asks it to keep its state between epochs (`Member.keep`) and closes
it when its run ends (`Member.close`): the record, also of a run stopped or failed, then
holds every epoch so far, and a final record removes the checkpoint.
"""

import logging
import time
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import torch
from omegaconf import DictConfig, OmegaConf
from torch_geometric import seed_everything

from lipnorm_exp.config import build_model
from lipnorm_exp.data import load_task
from lipnorm_exp.nn.copy_dropout import RandomStream
from lipnorm_exp.records import (
    FAILED,
    FINISHED,
    INTERRUPTED,
    SCHEMA_VERSION,
    git_commit,
    machine,
    portable_paths,
    run_numerics,
    save_record,
    schema,
    versions,
)
from lipnorm_exp.records.schema import Record
from lipnorm_exp.training.checkpoint import Checkpoint, restore, snapshot
from lipnorm_exp.training.epoch import EpochOutcome
from lipnorm_exp.training.state import RunState, TrackerFactory, make_optimizer
from lipnorm_exp.util.errors import DiskFullError
from lipnorm_exp.util.stopping import held_stops

__all__ = ["STREAM_KEY", "Member"]

log = logging.getLogger(__name__)

#: the checkpoint key of the dropout stream of a run trained among others
STREAM_KEY = "stream"


class Member:
    """One run: its config, identity, data, model, state, record and checkpoint.

    Args:
        cfg: the run's config (one seed).
        rid: its [`run_id`][lipnorm_exp.records.run_id].
        results_dir: the folder of its record.
        device: where it trains.
        started: when the launch started (UTC), the record's ``started_at``.
        clock: ``time.perf_counter()`` then.
        tracker: makes what receives its epochs and its record (called once its model is
            built, so a run whose data or model cannot be made starts no tracker).
        together: the seeds it trains with, where it trains among others: it then draws its
            dropout masks from a stream of its own (`
            RandomStream`), which its checkpoint keeps, and its record says ``batched``.
    """

    def __init__(
        self,
        cfg: DictConfig,
        rid: str,
        results_dir: Path,
        device: torch.device,
        started: datetime,
        clock: float,
        tracker: TrackerFactory,
        together: list[int] | None = None,
    ):
        self.cfg, self.rid, self.results_dir = cfg, rid, results_dir
        seed_everything(cfg.seed)
        self.task = task = load_task(cfg.dataset, cfg.paths, cfg.seed)
        model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs)
        self.model = model.to(device)
        self.stream = RandomStream(device) if together is not None else None
        self.record = self._new_record(device, started)
        if together is not None:
            self.record[schema.BATCHED] = {"seeds": together}
        self.tracker = tracker(cfg, rid)
        self.state = RunState(make_optimizer(self.model, cfg.train), cfg.train, self.tracker)
        self.checkpoint = Checkpoint(results_dir, rid, cfg.train.checkpoint_every, clock)
        if cfg.force:
            self.checkpoint.remove()

    def _new_record(self, device: torch.device, started: datetime) -> Record:
        """The record of the run about to train: ``failed`` until its training returns."""
        config = cast(dict[str, Any], OmegaConf.to_container(self.cfg, resolve=True))
        config["paths"] = portable_paths(config["paths"])
        return Record(
            schema_version=SCHEMA_VERSION,
            run_id=self.rid,
            status=FAILED,
            error=None,
            config=config,
            device=str(device),
            machine=machine(device),
            versions=versions(),
            git_commit=git_commit(),
            numerics=run_numerics(config),
            started_at=started.isoformat(),
        )

    def resume(self, desc: str = "") -> None:
        """Go on from the run's checkpoint where it holds a saved state.

        The model, the run's state, the random states, the task's generators and the run's own
        dropout stream are put back as they were at the end of the saved epoch.
        """
        saved = self.checkpoint.load()
        if not saved:
            return
        restore(saved, self.model, self.state, self.task.generators)
        if self.stream is not None:
            self.stream.state = saved[STREAM_KEY]
        log.info("%s run %s: resumed after epoch %d", desc, self.rid, saved["epoch"])

    def take(self, epoch: int, outcome: EpochOutcome, lipschitz: Callable[[], list[float]]):
        """Record epoch ``epoch``'s ``outcome``: a row of the history, or the divergence.

        ``lipschitz`` gives the per-layer Lipschitz estimates when they are due.
        """
        if outcome.diverged is not None:
            self.state.diverge(epoch, outcome.diverged)
        else:
            assert outcome.metrics is not None, "an epoch that did not diverge is scored"
            self.state.end_epoch(epoch, outcome.loss, outcome.metrics, outcome.grads, lipschitz)

    def keep(self) -> None:
        """Keep the run's state at the end of its last epoch for its checkpoint.

        Raises:
            DiskFullError: the checkpoint found no room; the message says where the run resumes.
        """
        extra = {} if self.stream is None else {STREAM_KEY: self.stream.state.clone()}
        try:
            self.checkpoint.keep(
                self.state.epoch,
                lambda: snapshot(self.model, self.state, self.task.generators, **extra),
            )
        except DiskFullError as error:
            raise DiskFullError(f"{error}; {self._resumes()}") from error

    def _resumes(self) -> str:
        """Where the run's next launch goes on from, in words."""
        epoch = self.checkpoint.written_epoch
        return f"run {self.rid} " + (f"resumes after epoch {epoch}" if epoch else "starts over")

    def close(self, setup_s: float, desc: str = "", error: BaseException | None = None) -> None:
        """End the run: its outcome into the record, the record saved, one log line.

        A run ended by ``error`` keeps its epochs so far: its checkpoint is written (from the
        end of its last whole epoch) and the record is ``interrupted`` (a stop request) or
        ``failed``, saying after which epoch it stopped and from which one its next launch
        resumes. A final record removes the checkpoint. A stop request (Ctrl-C, SIGTERM) while
        the record is written takes effect once it is whole
        (`held_stops`). A record that finds no room on the disk leaves the checkpoint as it
        is, for the next launch to resume from.

        Raises:
            DiskFullError: the record found no room; the message says where the run resumes.
        """
        self._end(error)
        self._add_timing(setup_s)
        with held_stops():
            try:
                save_record(self.results_dir, self.record)
            except DiskFullError as full:
                raise DiskFullError(f"{full}; {self._resumes()}") from full
            finally:
                self.tracker.finish(self.record)
            if self.record[schema.STATUS] in FINISHED:
                self.checkpoint.remove()
        self._log(desc)

    def _end(self, error: BaseException | None) -> None:
        self.record.update(self.state.result(self.task.metric_name))
        if self.checkpoint.resumed_at:
            self.record[schema.RESUMED_AT] = self.checkpoint.resumed_at
        if error is None:
            return
        with suppress(DiskFullError):  # the last checkpoint written stays, and the record says so
            self.checkpoint.write()
        if isinstance(error, KeyboardInterrupt):
            self.record[schema.STATUS] = INTERRUPTED
            self.record[schema.ERROR] = str(error) or type(error).__name__
        else:
            self.record[schema.STATUS] = FAILED
            self.record[schema.ERROR] = f"{type(error).__name__}: {error}"
        self.record[schema.STOPPED_AFTER_EPOCH] = self.state.epoch
        self.record[schema.RESUMES_AFTER_EPOCH] = self.checkpoint.written_epoch or None

    def _add_timing(self, setup_s: float) -> None:
        """The record's ``timing`` and ``finished_at``.

        ``total_s`` counts the run's earlier processes too (a resumed run); ``epoch_s_mean`` is
        over the epochs this process trained.
        """
        total = time.perf_counter() - self.checkpoint.clock
        resumed = self.checkpoint.resumed_at[-1] if self.checkpoint.resumed_at else 0
        epochs = len(self.record.get(schema.HISTORY, [])) - resumed
        self.record[schema.TIMING] = {
            "total_s": self.checkpoint.earlier_s + total,
            "setup_s": setup_s,
            "epoch_s_mean": (total - setup_s) / epochs if epochs > 0 else None,
        }
        self.record[schema.FINISHED_AT] = datetime.now(timezone.utc).isoformat()

    def _log(self, desc: str) -> None:
        """One log line: the run's status, best validation and test accuracy, time."""
        summary = self.record[schema.SUMMARY]
        log.info(
            "%s run %s %s: best val %.4f, test at best val %.4f (epoch %s), %.1f s",
            desc,
            self.rid,
            self.record[schema.STATUS],
            summary[schema.BEST_VAL_ACC] or float("nan"),
            summary[schema.TEST_ACC_AT_BEST_VAL] or float("nan"),
            summary[schema.BEST_EPOCH],
            self.record[schema.TIMING]["total_s"],
        )
