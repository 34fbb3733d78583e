"""A real, private Slurm cluster with accounting, started on this machine for integration tests.

Why: our sacct loader must survive what `sacct` really prints (steps, arrays, requeues, `CANCELLED by
<uid>`, `Unknown` times, hostlists, TRES strings), and hand-written samples drift from the real thing.
This harness builds every config in a temp dir and starts munged, a private MariaDB, slurmdbd, slurmctld
and one slurmd per node on free 127.0.0.1 ports, so it never touches the machine's own services and
can run next to other test sessions. The facts it relies on are in docs/testing.md.

Every process it starts (and everything they spawn: slurmstepd, job scripts) carries a marker in its
environment; teardown stops the daemons by PID and then kills whatever still carries the marker, so a
`slurmstepd` that outlived its slurmd is not left behind.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType

MARKER_VAR = "GPU_LEDGER_SLURM_HARNESS"
"""Environment variable set (to the cluster's temp dir) on every process the harness starts."""

REQUIRED_BINARIES = (
    "munged",
    "mariadb-install-db",
    "mariadbd",
    "mariadb",
    "slurmdbd",
    "slurmctld",
    "slurmd",
    "sbatch",
    "sacct",
    "sacctmgr",
    "scontrol",
    "scancel",
    "squeue",
    "sinfo",
)
"""What `make test` installs through scripts/system-deps.sh (slurm-wlm, slurmdbd, slurm-client, munge,
mariadb-server); the daemons live in /usr/sbin, which a non-root PATH may lack."""

_SBIN = ("/usr/sbin", "/sbin", "/usr/local/sbin")

TERMINAL_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "OUT_OF_MEMORY",
        "BOOT_FAIL",
        "DEADLINE",
    }
)


def which(name: str) -> str | None:
    """Find a binary on PATH or in the sbin folders (daemons are there, often off a user's PATH)."""
    path = os.environ.get("PATH", "") + os.pathsep + os.pathsep.join(_SBIN)
    return shutil.which(name, path=path)


def missing_binaries() -> list[str]:
    """Names of the binaries this harness needs that are not installed, so tests can skip with a reason."""
    return [name for name in REQUIRED_BINARIES if which(name) is None]


def skip_reason(users: Iterable[str] = ("root", "nobody")) -> str | None:
    """Why a real cluster cannot start here (missing binaries, not root, no such user), or None."""
    missing = missing_binaries()
    if missing:
        return f"Slurm/munge/MariaDB binaries missing ({', '.join(missing)}); run scripts/system-deps.sh"
    if os.geteuid() != 0:
        return "a real Slurm cluster needs root (slurmd must switch to the job's user)"
    for name in users:
        try:
            pwd.getpwnam(name)
        except KeyError:
            return f"the test cluster runs jobs as Unix user {name!r}, which does not exist here"
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it; a tiny race with others is accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class SlurmUser:
    """An existing Unix user given Slurm associations, so jobs carry a real account and WCKey."""

    name: str
    accounts: tuple[str, ...]
    wckeys: tuple[str, ...] = ()

    @property
    def uid(self) -> int:
        """The user's numeric id, as `CANCELLED by <uid>` prints it."""
        return pwd.getpwnam(self.name).pw_uid

    @property
    def gid(self) -> int:
        """The user's primary group, used when running client commands as this user."""
        return pwd.getpwnam(self.name).pw_gid


DEFAULT_USERS = (
    SlurmUser("root", ("ml", "research"), ("proj-a", "proj-b")),
    SlurmUser("nobody", ("research",), ("proj-b",)),
)
"""root plus the always-present `nobody`, so a test can show jobs of two users and a cancel by another uid."""


@dataclass
class _Daemon:
    """One started daemon, kept so teardown can stop it by its own PID (never by name)."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path


@dataclass
class SlurmCluster:
    """A private Slurm cluster: use as a context manager; everything is torn down on exit.

    Nodes are declared big (`SlurmdParameters=config_overrides`) with fake GPUs (gres files that are
    symlinks to /dev/null), so a two-core machine can run a matrix of multi-GPU jobs side by side. Each
    GPU also carries `shards_per_gpu` shards (Slurm's sharding: jobs that ask for gres/shard share a GPU).
    """

    cluster_name: str = "ledgertest"
    nodes: tuple[str, ...] = ("gpu-01", "gpu-02")
    gpu_type: str = "a100"
    gpus_per_node: int = 8
    shards_per_gpu: int = 8
    cpus_per_node: int = 64
    mem_per_node_mb: int = 512_000
    partition: str = "gpu"
    users: tuple[SlurmUser, ...] = DEFAULT_USERS
    mail_prog: str | None = None  # slurm.conf's MailProg, run by slurmctld for jobs' --mail-type
    keep_dir: bool = False
    start_timeout_s: float = 90.0
    root: Path = field(init=False)
    conf: Path = field(init=False)
    started_at: datetime = field(init=False)
    _daemons: list[_Daemon] = field(init=False, default_factory=list)
    _ports: dict[str, int] = field(init=False, default_factory=dict)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> SlurmCluster:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Write the configs and start every daemon, each only once the one it depends on answers."""
        reason = skip_reason(u.name for u in self.users)
        if reason:
            raise RuntimeError(reason)
        # under /tmp itself (not pytest's 0700 tmp dir) so a non-root job user can reach its work dir
        self.root = Path(tempfile.mkdtemp(prefix="gpu-ledger-slurm-"))
        self.root.chmod(0o755)
        self.conf = self.root / "etc" / "slurm.conf"
        self.started_at = datetime.now(UTC).replace(microsecond=0)
        try:
            self._write_configs()
            self._start_munge()
            self._start_mariadb()
            self._start_slurmdbd()
            self._create_associations()
            self._start_slurmctld()
            self._start_slurmds()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> list[int]:
        """Cancel jobs, stop daemons by PID, kill stray marked processes; return PIDs that survived."""
        if not hasattr(self, "root"):
            return []
        ctld = next((d for d in self._daemons if d.name == "slurmctld"), None)
        if ctld is not None and ctld.proc.poll() is None:

            def queued() -> list[str]:
                return self.run(["squeue", "-h", "-o", "%A"], check=False, timeout=10).stdout.split()

            ids = queued()
            if ids:
                self.run(["scancel", *ids], check=False, timeout=10)
                self._poll(
                    lambda: not queued(),
                    timeout=10,
                    what="jobs to be cancelled",
                    fail=False,
                )
        # reverse start order: slurmds, slurmctld, slurmdbd, MariaDB, munged
        for daemon in reversed(self._daemons):
            _terminate(daemon.proc)
        self._daemons.clear()
        survivors = self._kill_marked()
        if not self.keep_dir:
            shutil.rmtree(self.root, ignore_errors=True)
        return survivors

    @property
    def daemon_pids(self) -> dict[str, int]:
        """PID of every daemon started so far, by name, so a test can check they are gone afterwards."""
        return {d.name: d.proc.pid for d in self._daemons}

    # ------------------------------------------------------------------ client helpers

    @property
    def env(self) -> dict[str, str]:
        """Environment for daemons and clients: our slurm.conf, UTC times, and the teardown marker."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update(
            SLURM_CONF=str(self.conf),
            TZ="UTC",
            LC_ALL="C.UTF-8",
            PATH=os.environ.get("PATH", "/usr/bin:/bin") + os.pathsep + os.pathsep.join(_SBIN),
        )
        env[MARKER_VAR] = str(self.root)
        return env

    @property
    def job_dir(self) -> Path:
        """World-writable work dir for jobs (their .out files land here)."""
        return self.root / "jobs"

    def user(self, name: str) -> SlurmUser:
        """The configured user called `name`."""
        for u in self.users:
            if u.name == name:
                return u
        raise KeyError(name)

    def run(
        self,
        args: Sequence[str],
        *,
        user: str | None = None,
        check: bool = True,
        timeout: float = 30,
        input_text: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client against this cluster, optionally as another Unix user (setuid, no sudo)."""
        kwargs: dict[str, object] = {}
        env = self.env
        if user is not None and user != pwd.getpwuid(os.geteuid()).pw_name:
            entry = pwd.getpwnam(user)
            kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
            env.update(USER=user, LOGNAME=user, HOME=str(self.job_dir))
        result = subprocess.run(
            list(args),
            env=env,
            cwd=self.job_dir,
            input=input_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **kwargs,  # type: ignore[arg-type]
        )
        if check and result.returncode != 0:
            said = result.stderr.strip() or result.stdout.strip()
            raise RuntimeError(f"{' '.join(args)} exited {result.returncode}: {said}")
        return result

    def submit(
        self,
        script: str,
        *,
        user: str = "root",
        gpus: int | None = None,
        shards: int | None = None,
        name: str | None = None,
        account: str | None = None,
        wckey: str | None = None,
        comment: str | None = None,
        time_limit: str | None = None,
        extra: Iterable[str] = (),
    ) -> int:
        """sbatch a shell script body; return the job id. `gpus` is per node (`--gres=gpu:<type>:N`), as are
        `shards` (`--gres=shard:N`, part of one GPU)."""
        args = ["sbatch", "--parsable", f"--chdir={self.job_dir}", f"--output={self.job_dir}/%j.out"]
        if gpus is not None:
            args.append(f"--gres=gpu:{self.gpu_type}:{gpus}")
        if shards is not None:
            args.append(f"--gres=shard:{shards}")
        if name is not None:
            args.append(f"--job-name={name}")
        if account is not None:
            args.append(f"--account={account}")
        if wckey is not None:
            args.append(f"--wckey={wckey}")
        if comment is not None:
            args.append(f"--comment={comment}")
        if time_limit is not None:
            args.append(f"--time={time_limit}")
        args.extend(extra)
        body = script if script.startswith("#!") else "#!/bin/bash\n" + script + "\n"
        out = self.run(args, user=user, input_text=body).stdout.strip()
        return int(out.split(";")[0])

    def live_state(self, job_id: int) -> str:
        """The controller's view of one job (first word of JobState), e.g. PENDING right after a requeue."""
        out = self.run(["scontrol", "show", "job", "-o", str(job_id)], check=False).stdout
        match = re.search(r"\bJobState=(\S+)", out)
        return match.group(1) if match else ""

    def accounting_states(self, job_id: int) -> dict[str, str]:
        """JobID -> State of the job's allocation rows (array tasks included) as slurmdbd has them."""
        args = ["sacct", "-n", "-X", "-P", "--allusers", "-S", self.since, "-o", "JobID,State"]
        out = self.run([*args, "-j", str(job_id)], check=False).stdout
        states: dict[str, str] = {}
        for line in out.splitlines():
            if "|" in line:
                jid, state = line.split("|", 1)
                states[jid] = state
        return states

    def wait_for(
        self,
        job_id: int,
        states: str | Iterable[str],
        *,
        timeout: float = 60,
        count: int = 1,
        live: bool = False,
    ) -> dict[str, str]:
        """Wait until `count` rows of the job (array tasks) are in one of `states` (first word).

        Accounting (sacct) is the default view, since that is what the test captures; `live=True` asks
        slurmctld instead, for transient states such as PENDING after a requeue.
        """
        wanted = {states} if isinstance(states, str) else set(states)
        seen: dict[str, str] = {}

        def ready() -> bool:
            nonlocal seen
            seen = {str(job_id): self.live_state(job_id)} if live else self.accounting_states(job_id)
            return sum(1 for s in seen.values() if s.split(" ")[0] in wanted) >= count

        self._poll(ready, timeout=timeout, what=f"job {job_id} to reach {sorted(wanted)} (last seen {seen})")
        return seen

    @property
    def since(self) -> str:
        """`-S` value covering everything this cluster ran (a minute before it started, UTC)."""
        return (self.started_at - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S")

    def sacct(self, fields: Sequence[str], *, header: bool = True, extra: Iterable[str] = ()) -> str:
        """What `sacct --allusers --duplicates --parsable2 -S <start> -E now` prints, exactly."""
        args = [
            "sacct",
            "--allusers",
            "--duplicates",
            "--parsable2",
            "-S",
            self.since,
            "-E",
            "now",
            f"--format={','.join(fields)}",
        ]
        if not header:
            args.append("--noheader")
        args.extend(extra)
        return self.run(args).stdout

    def logs(self, tail: int = 30) -> str:
        """The last lines of every daemon log, for failure messages."""
        parts = []
        for log in sorted((self.root / "log").glob("*.log")) if hasattr(self, "root") else []:
            lines = log.read_text(errors="replace").splitlines()[-tail:]
            parts.append(f"==> {log.name} <==\n" + "\n".join(lines))
        return "\n".join(parts)

    # ------------------------------------------------------------------ internals

    def _poll(self, ready: Callable[[], bool], *, timeout: float, what: str, fail: bool = True) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            for daemon in self._daemons:
                if daemon.proc.poll() is not None:
                    raise RuntimeError(
                        f"{daemon.name} exited ({daemon.proc.returncode}) while waiting for {what}\n"
                        + self.logs()
                    )
            if ready():
                return True
            if time.monotonic() > deadline:
                if fail:
                    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}\n" + self.logs())
                return False
            time.sleep(0.5)

    def _spawn(self, name: str, args: Sequence[str]) -> _Daemon:
        log = self.root / "log" / f"{name}.out.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                list(args),
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        daemon = _Daemon(name, proc, log)
        self._daemons.append(daemon)
        return daemon

    def _write_configs(self) -> None:
        r = self.root
        for sub in ("etc", "log", "run", "state", "munge", "db", "dev", "jobs"):
            (r / sub).mkdir()
        for node in self.nodes:
            (r / "spool" / node).mkdir(parents=True)
        self.job_dir.chmod(0o1777)
        (r / "munge").chmod(0o755)  # job users' clients must reach the munge socket
        for i in range(self.gpus_per_node):  # gres needs device files; symlinks to /dev/null pass its checks
            (r / "dev" / f"nvidia{i}").symlink_to("/dev/null")
        key = r / "etc" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)

        self._ports = {name: free_port() for name in ("mysql", "dbd", "ctld", *self.nodes)}
        host = socket.gethostname().split(".")[0]
        self._db_pass = os.urandom(8).hex()
        self._munge_socket = r / "munge" / "munge.socket"
        auth = ["AuthType=auth/munge", f"AuthInfo=socket={self._munge_socket}"]

        dbd = r / "etc" / "slurmdbd.conf"
        dbd.touch(mode=0o600)  # it holds the database password; slurmdbd refuses a readable one
        _write_lines(
            dbd,
            *auth,
            f"DbdHost={host}",
            "DbdAddr=127.0.0.1",
            f"DbdPort={self._ports['dbd']}",
            "SlurmUser=root",
            f"PidFile={r}/run/slurmdbd.pid",
            f"LogFile={r}/log/slurmdbd.log",
            "DebugLevel=info",
            "StorageType=accounting_storage/mysql",
            "StorageHost=127.0.0.1",  # slurmdbd.conf has no socket option: TCP on loopback
            f"StoragePort={self._ports['mysql']}",
            "StorageUser=slurm",
            f"StoragePass={self._db_pass}",
            "StorageLoc=slurm_acct_db",
            "TrackWCKey=yes",
        )
        _write_lines(
            self.conf,
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={self._ports['ctld']}",
            *auth,
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool/%n",
            f"SlurmctldPidFile={r}/run/slurmctld.pid",
            f"SlurmdPidFile={r}/run/slurmd.%n.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd.%n.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            # no cgroups in a container: plain process tracking, no usage gathering
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "LaunchType=launch/slurm",
            # cons_tres with memory, else AllocTRES carries no mem; a default so jobs do not take a whole node
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "DefMemPerCPU=1000",
            "GresTypes=gpu,shard",
            "SlurmdParameters=config_overrides",  # a 2-core machine may claim big nodes
            *([f"MailProg={self.mail_prog}"] if self.mail_prog else []),
            "ReturnToService=2",
            "SchedulerType=sched/backfill",
            "SchedulerParameters=sched_interval=2,bf_interval=2",
            "PriorityType=priority/basic",
            "AccountingStorageType=accounting_storage/slurmdbd",
            "AccountingStorageHost=127.0.0.1",
            f"AccountingStoragePort={self._ports['dbd']}",
            # clients reach slurmdbd through the munge socket named here, not AuthInfo's (slurm.conf(5))
            f"AccountingStoragePass={self._munge_socket}",
            f"AccountingStorageTRES=gres/gpu,gres/gpu:{self.gpu_type},gres/shard",
            "AccountingStoreFlags=job_comment",  # else sacct's Comment is empty
            "TrackWCKey=yes",
            "JobCompType=jobcomp/none",
            # short waits so TIMEOUT and cancels settle quickly; MinJobAge keeps ended jobs for scontrol
            "KillWait=2",
            "OverTimeLimit=0",
            "MinJobAge=600",
            "InactiveLimit=0",
            "SlurmdTimeout=60",
            "MessageTimeout=20",
            f"NodeName=DEFAULT CPUs={self.cpus_per_node} RealMemory={self.mem_per_node_mb} "
            f"Gres=gpu:{self.gpu_type}:{self.gpus_per_node},shard:{self.shards_per_gpu * self.gpus_per_node} "
            "State=UNKNOWN",
            # NodeHostname/NodeAddr/Port per node line: several slurmd share this host
            *(
                f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={self._ports[n]}"
                for n in self.nodes
            ),
            f"PartitionName={self.partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        )
        _write_lines(
            r / "etc" / "gres.conf",
            "AutoDetect=off",
            f"Name=gpu Type={self.gpu_type} File={r}/dev/nvidia[0-{self.gpus_per_node - 1}]",
            f"Name=shard Count={self.shards_per_gpu * self.gpus_per_node}",  # spread evenly over the GPUs
        )

    def _start_munge(self) -> None:
        r = self.root
        self._spawn(
            "munged",
            [
                which("munged") or "munged",
                "--foreground",
                "--force",
                f"--socket={self._munge_socket}",
                f"--key-file={r}/etc/munge.key",
                f"--pid-file={r}/run/munged.pid",
                f"--log-file={r}/log/munged.log",
                f"--seed-file={r}/run/munged.seed",
            ],
        )
        self._poll(self._munge_socket.exists, timeout=self.start_timeout_s, what="munged's socket")

    def _start_mariadb(self) -> None:
        r = self.root
        sock = r / "run" / "mysqld.sock"
        install = subprocess.run(
            [
                which("mariadb-install-db") or "mariadb-install-db",
                "--no-defaults",
                f"--datadir={r}/db",
                "--user=root",
                "--skip-test-db",
                "--auth-root-authentication-method=socket",
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if install.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {install.stderr or install.stdout}")
        self._spawn(
            "mariadbd",
            [
                which("mariadbd") or "mariadbd",
                "--no-defaults",
                f"--datadir={r}/db",
                f"--socket={sock}",
                "--bind-address=127.0.0.1",
                f"--port={self._ports['mysql']}",
                "--user=root",
                "--skip-name-resolve",
                f"--pid-file={r}/run/mysqld.pid",
                f"--log-error={r}/log/mariadb.log",
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=0",
            ],
        )
        client = [which("mariadb") or "mariadb", "--no-defaults", f"--socket={sock}", "-u", "root"]

        def answers() -> bool:
            probe = subprocess.run([*client, "-e", "SELECT 1"], capture_output=True, check=False)
            return probe.returncode == 0

        self._poll(answers, timeout=self.start_timeout_s, what="MariaDB")
        sql = (
            f"CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{self._db_pass}';"
            "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
        )
        subprocess.run([*client, "-e", sql], capture_output=True, check=True, timeout=30)

    def _start_slurmdbd(self) -> None:
        self._spawn("slurmdbd", [which("slurmdbd") or "slurmdbd", "-D"])

        def answers() -> bool:
            return self.run(["sacctmgr", "-n", "list", "cluster"], check=False, timeout=15).returncode == 0

        self._poll(answers, timeout=self.start_timeout_s, what="slurmdbd")

    def _create_associations(self) -> None:
        self.run(["sacctmgr", "-i", "add", "cluster", self.cluster_name])
        accounts = sorted({a for u in self.users for a in u.accounts})
        self.run(["sacctmgr", "-i", "add", "account", ",".join(accounts), f"cluster={self.cluster_name}"])
        for u in self.users:
            args = ["sacctmgr", "-i", "add", "user", u.name, f"account={','.join(u.accounts)}"]
            args.append(f"defaultaccount={u.accounts[0]}")
            self.run(args)
            if u.wckeys:
                self.run(
                    ["sacctmgr", "-i", "add", "user", u.name, f"wckeys={','.join(u.wckeys)}"]
                    + [f"defaultwckey={u.wckeys[0]}", f"cluster={self.cluster_name}"]
                )

    def _start_slurmctld(self) -> None:
        self._spawn("slurmctld", [which("slurmctld") or "slurmctld", "-D", "-i"])

        def answers() -> bool:
            return "UP" in self.run(["scontrol", "ping"], check=False, timeout=15).stdout

        self._poll(answers, timeout=self.start_timeout_s, what="slurmctld")

    def _start_slurmds(self) -> None:
        for node in self.nodes:
            self._spawn(f"slurmd-{node}", [which("slurmd") or "slurmd", "-D", "-N", node])

        def idle() -> bool:
            out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], check=False, timeout=15).stdout
            states = dict(line.split() for line in out.splitlines() if line.strip())
            return all(states.get(n) == "idle" for n in self.nodes)

        self._poll(idle, timeout=self.start_timeout_s, what=f"nodes {', '.join(self.nodes)} to be idle")

    def marked_pids(self) -> list[int]:
        """PIDs of live processes carrying this cluster's marker (daemons, slurmstepd, job scripts)."""
        needle = f"{MARKER_VAR}={self.root}".encode()
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if needle in environ.split(b"\0") and ") Z " not in stat:  # zombies are already dead
                pids.append(int(entry.name))
        return pids

    def _kill_marked(self) -> list[int]:
        deadline = time.monotonic() + 10
        pids = self.marked_pids()
        while pids and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
            pids = self.marked_pids()
        return pids


def _write_lines(path: Path, *lines: str) -> None:
    """Write a Slurm-style config file, one setting per line."""
    path.write_text("\n".join(lines) + "\n")


def _terminate(proc: subprocess.Popen[bytes], grace_s: float = 10) -> None:
    """SIGTERM one daemon by PID, SIGKILL it if it lingers, and reap it."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace_s)


def parse_parsable2(text: str, fields: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Rows of `sacct --parsable2` output as dicts; the last field keeps any `|` (JobName may hold one)."""
    lines = [line for line in text.splitlines() if line]
    if fields is None:
        fields, lines = lines[0].split("|"), lines[1:]
    return [dict(zip(fields, line.split("|", len(fields) - 1), strict=True)) for line in lines]
