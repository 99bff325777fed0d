"""What a verification costs: the training time its records took, and a running estimate.

A record names the time its run trained (``timing.total_s``), the machine and the numerics that
made it. Before anything trains, `cost_lines` says what the chosen records took, by machine and
numerics version: the best estimate there is of the verification's cost on the machines that
made them. While it runs, `Pace` scales the time still to go by what the runs verified so far
took here against what they took when made (this machine, its load, today's numerics), so the
estimate learns this machine's speed as it goes.
"""

import time
from collections import defaultdict
from collections.abc import Iterable

from lipnorm_exp.records import schema
from lipnorm_exp.records.schema import Record, numerics_version


def made_seconds(record: Record) -> float:
    """The seconds ``record``'s run trained when it was made; 0 where it does not say."""
    timing = record.get(schema.TIMING)
    return float(timing["total_s"]) if timing else 0.0


def made_on(record: Record) -> str:
    """The machine that made ``record``: its device and processor model, where it names them."""
    machine = record.get(schema.MACHINE)
    if not machine:
        return str(record.get(schema.DEVICE) or "an unnamed machine")
    processor = machine.get("processor_model") or machine.get("processor")
    return machine["device"] if str(machine["device"]).startswith("cuda") else f"cpu ({processor})"


def cost_lines(records: Iterable[Record]) -> list[str]:
    """One line per machine and numerics version: how many records, and the hours they took."""
    hours: dict[tuple[str, str], float] = defaultdict(float)
    count: dict[tuple[str, str], int] = defaultdict(int)
    for record in records:
        numerics = numerics_version(record)
        key = (made_on(record), "unversioned" if numerics is None else f"numerics {numerics}")
        hours[key] += made_seconds(record) / 3600
        count[key] += 1
    return [
        f"  {count[key]} made on {key[0]}, {key[1]}: {hours[key]:.2f} h"
        for key in sorted(hours, key=lambda key: -hours[key])
    ]


def clock(seconds: float) -> str:
    """``seconds`` as ``1h05m`` or ``4m10s``."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class Pace:
    """Progress and the time to go of a verification of ``records``, in order.

    After the runs done so far took ``spent`` seconds here where they took ``made`` seconds when
    made, the runs left, which took ``left`` seconds when made, are expected to take
    ``left * spent / made`` here.
    """

    def __init__(self, records: list[Record]) -> None:
        self.made_left = sum(made_seconds(record) for record in records)
        self.made_done = 0.0
        self.spent = 0.0
        self.started = time.monotonic()

    def done(self, record: Record) -> str:
        """Count ``record`` as verified; the time spent so far and the time to go, in words."""
        self.spent = time.monotonic() - self.started
        made = made_seconds(record)
        self.made_done += made
        self.made_left -= made
        if self.made_done <= 0:
            return f"{clock(self.spent)} spent"
        to_go = max(self.made_left, 0.0) * self.spent / self.made_done
        return f"{clock(self.spent)} spent, about {clock(to_go)} to go"
