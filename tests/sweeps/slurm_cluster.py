"""A single-node SLURM cluster on this machine, for the tests of the SLURM launcher.

:func:`slurm_cluster` writes a minimal ``slurm.conf`` (this machine as its one node, with the
cores and memory ``slurmd -C`` finds, one partition) into a folder and starts, as children of
this process and in the foreground, ``munged`` (authentication), ``mariadbd`` and ``slurmdbd``
(the accounting ``sacct`` reads), ``slurmctld`` and ``slurmd``; it waits until ``sinfo`` shows
the node idle. At the end it cancels the cluster's jobs and stops every daemon by its process
id, then any process still carrying the cluster's ``SLURM_CONF`` (job steps, a job's
processes), so that nothing it started is left running, also when a test failed. Every file,
socket and port is its own: the machine's own services, if any, are left alone.

Needs root and Debian's ``slurm-wlm``, ``slurmdbd``, ``munge`` and ``mariadb-server``
(``make test-slurm`` installs them where missing); :func:`cannot_start` says what is missing.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

__all__ = [
    "PROGRAMS",
    "ClusterError",
    "SlurmCluster",
    "cannot_start",
    "slurm_cluster",
    "wait_until",
]

#: the programs the cluster runs, daemons and clients
PROGRAMS = (
    "munged",
    "mariadb-install-db",
    "mariadbd",
    "slurmdbd",
    "slurmctld",
    "slurmd",
    "sinfo",
    "squeue",
    "scancel",
    "sacct",
)
#: seconds a daemon, the node or the cluster's jobs get to be ready or gone
DEADLINE_S = 60
POLL_S = 0.2


class ClusterError(RuntimeError):
    """The cluster did not start or stop; the message says which part and shows its log."""


def cannot_start() -> str | None:
    """Why this machine cannot start the cluster (not root, programs missing), or ``None``."""
    if os.geteuid() != 0:
        return "the SLURM daemons run as root here; this process is not root"
    missing = [program for program in PROGRAMS if shutil.which(program) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (make test-slurm installs them)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


#: ``sacct`` states of a job that has not ended, as far as the accounting has heard
ACTIVE_STATES = ("PENDING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED")


def wait_until(ready, what: str, log: Path | None = None, timeout: float = DEADLINE_S) -> None:
    """Poll ``ready()`` until it is true, or raise :class:`ClusterError` after ``timeout`` s.

    The error ends with the last lines of ``log``, where given.
    """
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            tail = log.read_text()[-2000:] if log and log.exists() else ""
            raise ClusterError(f"{what} not within {timeout} s\n{tail}")
        time.sleep(POLL_S)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


class SlurmCluster:
    """The running cluster: its folder, its config, and its SLURM commands.

    Args:
        folder: where its config, state, logs and sockets are.
    """

    def __init__(self, folder: Path):
        self.folder = folder
        self.conf = folder / "slurm.conf"
        #: this process's environment with the cluster's ``SLURM_CONF``: give it to anything
        #: that calls ``sbatch``, ``sacct``, ... (a sweep through ``submitit_slurm``)
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._daemons: list[tuple[str, subprocess.Popen]] = []

    def run(self, *command: str) -> str:
        """The output of a SLURM command (``sacct ...``) on this cluster; fails on an error."""
        out = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise ClusterError(f"{' '.join(command)}: {out.stderr.strip()}")
        return out.stdout

    def accounted_jobs(self) -> dict[str, str]:
        """Each job ``sacct`` knows on this cluster → its state (array tasks: ``<id>_<task>``).

        The state is its first word: ``CANCELLED by 0`` (the user who cancelled) → ``CANCELLED``.
        """
        out = self.run("sacct", "-X", "-n", "-P", "-a", "-S", "2000-01-01", "-o", "JobID,State")
        jobs = (line.split("|", 1) for line in out.splitlines() if line)
        return {job: state.split()[0] for job, state in jobs}

    def ended_state(self, job: str) -> str:
        """The state ``sacct`` gives ``job`` once the accounting has recorded its end.

        slurmctld reports to slurmdbd asynchronously: a job ``squeue`` no longer lists can be
        missing from ``sacct``, or still active there, for a moment.
        """
        wait_until(
            lambda: self.accounted_jobs().get(job, "PENDING") not in ACTIVE_STATES,
            f"sacct recording the end of job {job}",
        )
        return self.accounted_jobs()[job]

    def queued_jobs(self) -> list[str]:
        """The jobs pending or running (``squeue``), job array tasks as ``<id>_<task>``."""
        return self.run("squeue", "-h", "-r", "-o", "%i").split()

    def start(self, name: str, *command: str) -> subprocess.Popen:
        """Start a daemon in the foreground, its output in ``log/<name>.out``."""
        logs = self.folder / "log"
        logs.mkdir(exist_ok=True)
        with open(logs / f"{name}.out", "w") as out:
            daemon = subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self._daemons.append((name, daemon))
        return daemon

    def stop(self) -> None:
        """Cancel the jobs, stop the daemons (last started first), then any process left.

        Raises:
            ClusterError: a process that did not end.
        """
        with ExitStack() as steps:  # run last registered first, each also after an error
            steps.callback(self._end_leftovers)
            for _, daemon in self._daemons:
                steps.callback(self._end, daemon)
            if self._running("slurmctld"):
                steps.callback(self._cancel_jobs)
        self._daemons.clear()

    def _running(self, name: str) -> bool:
        return any(known == name and daemon.poll() is None for known, daemon in self._daemons)

    def _cancel_jobs(self) -> None:
        jobs = self.queued_jobs()
        if jobs:
            self.run("scancel", *jobs)
        wait_until(lambda: not self.queued_jobs(), "the cluster's jobs ending")

    @staticmethod
    def _end(daemon: subprocess.Popen) -> None:
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(DEADLINE_S)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(DEADLINE_S)

    def _leftovers(self) -> list[int]:
        """Processes other than this one whose environment holds this cluster's ``SLURM_CONF``."""
        marker = f"SLURM_CONF={self.conf}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:  # ended meanwhile
                continue
            if marker in environ and state != "Z":
                found.append(int(entry.name))
        return found

    def _end_leftovers(self) -> None:
        for pid in self._leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_until(lambda: not self._leftovers(), "the cluster's processes ending")


def _munge_key(path: Path) -> None:
    path.touch(mode=0o600)
    path.write_bytes(os.urandom(1024))


def _node_line() -> str:
    """This machine as a SLURM node: ``NodeName=<host> CPUs=... RealMemory=...`` (``slurmd -C``)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.splitlines()[0]


def _write_configs(cluster: SlurmCluster, ports: dict[str, int]) -> str:
    """``slurm.conf`` and ``slurmdbd.conf`` in the cluster's folder; returns the node's name."""
    folder = cluster.folder
    node = _node_line()
    name = node.split()[0].removeprefix("NodeName=")
    munge = f"socket={folder / 'munge' / 'socket'}"
    cluster.conf.write_text(
        f"""ClusterName=lipnorm
SlurmctldHost={name}(127.0.0.1)
SlurmctldPort={ports["slurmctld"]}
SlurmdPort={ports["slurmd"]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo={munge}
CredType=cred/munge
StateSaveLocation={folder / "state"}
SlurmdSpoolDir={folder / "spool"}
SlurmctldPidFile={folder / "slurmctld.pid"}
SlurmdPidFile={folder / "slurmd.pid"}
SlurmctldLogFile={folder / "log" / "slurmctld.log"}
SlurmdLogFile={folder / "log" / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={ports["slurmdbd"]}
AccountingStoragePass={folder / "munge" / "socket"}
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
MpiDefault=none
ReturnToService=2
{node} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes={name} Default=YES MaxTime=INFINITE State=UP
"""
    )
    dbd = folder / "slurmdbd.conf"
    dbd.touch(mode=0o600)
    dbd.write_text(
        f"""AuthType=auth/munge
AuthInfo={munge}
DbdAddr=127.0.0.1
DbdHost=localhost
DbdPort={ports["slurmdbd"]}
SlurmUser=root
PidFile={folder / "slurmdbd.pid"}
LogFile={folder / "log" / "slurmdbd.log"}
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={ports["mariadb"]}
StorageUser=root
StorageLoc=slurm_accounting
"""
    )
    return name


def _start_daemons(cluster: SlurmCluster) -> None:
    folder = cluster.folder
    for sub in ("munge", "state", "spool", "log", "db"):
        (folder / sub).mkdir(mode=0o711)
    ports = {name: _free_port() for name in ("slurmctld", "slurmd", "slurmdbd", "mariadb")}
    _write_configs(cluster, ports)
    munge = folder / "munge"
    _munge_key(munge / "key")
    cluster.start(
        "munged",
        "munged",
        "--foreground",
        "--force",
        f"--socket={munge / 'socket'}",
        f"--key-file={munge / 'key'}",
        f"--pid-file={munge / 'pid'}",
        f"--seed-file={munge / 'seed'}",
        f"--log-file={folder / 'log' / 'munged.log'}",
    )
    wait_until((munge / "socket").exists, "munged's socket", folder / "log" / "munged.out")
    database = ("--no-defaults", "--user=root", f"--datadir={folder / 'db'}")
    subprocess.run(
        ["mariadb-install-db", *database, "--auth-root-authentication-method=normal"],
        capture_output=True,
        check=True,
        timeout=300,
    )
    cluster.start(
        "mariadbd",
        "mariadbd",
        *database,
        f"--socket={folder / 'mariadb.socket'}",
        "--bind-address=127.0.0.1",
        f"--port={ports['mariadb']}",
        f"--pid-file={folder / 'mariadb.pid'}",
        "--innodb-buffer-pool-size=16M",
    )
    wait_until(lambda: _accepts(ports["mariadb"]), "MariaDB", folder / "log" / "mariadbd.out")
    cluster.start("slurmdbd", "slurmdbd", "-D")
    wait_until(lambda: _accepts(ports["slurmdbd"]), "slurmdbd", folder / "log" / "slurmdbd.out")
    cluster.start("slurmctld", "slurmctld", "-D", "-i")
    cluster.start("slurmd", "slurmd", "-D")

    def node_idle() -> bool:
        out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=cluster.env, capture_output=True)
        return out.stdout.decode().split() == ["idle"]

    wait_until(node_idle, "the node idle in sinfo", folder / "log" / "slurmd.log")


@contextmanager
def slurm_cluster(folder: Path) -> Iterator[SlurmCluster]:
    """The cluster, started in the empty ``folder`` and stopped at the end of the block.

    Raises:
        ClusterError: :func:`cannot_start` says why, or a daemon did not start (its log).
    """
    problem = cannot_start()
    if problem:
        raise ClusterError(problem)
    cluster = SlurmCluster(folder)
    try:
        _start_daemons(cluster)
        yield cluster
    finally:
        cluster.stop()
