"""`ember run -n N script.py ...`: start a data-parallel job (torchrun-like, over mpiexec).

The launcher runs `mpiexec -n N python -m ember.tools.run --rank ...`: each rank's
bootstrap (this module's `rank_main`) sets torchrun's variables (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE) from MPI's, records its pid and, if it fails, why, in the
job's folder, then runs the script as __main__.  An uncaught error ends the whole job at
once.  The launcher forwards SIGINT and SIGTERM, kills what is left of the job when
mpiexec ends, and says which rank failed and how.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

GRACE_S = 5.0        # after a forwarded signal, before the job is killed outright


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--nproc", type=int, default=2, metavar="N",
                        help="number of processes (default 2)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="every collective's timeout (EMBER_DISTRIBUTED_TIMEOUT)")
    parser.add_argument("--debug", action="store_true",
                        help="also compare the collectives' sequence numbers and stop async "
                             "ones at their call (EMBER_DISTRIBUTED_DEBUG=1)")
    parser.add_argument("--hosts", default=None,
                        help="comma-separated hosts for mpiexec (default: this machine)")
    parser.add_argument("--hostfile", default=None, metavar="PATH",
                        help="MPICH host file, one `host:processes` a line (mpiexec -f); "
                             "see docs/fsdp.md, 'More than one host'")
    parser.add_argument("--mpiexec", default=None, metavar="PATH",
                        help="the MPI launcher (default: the one beside this Python, then "
                             "PATH)")
    parser.add_argument("-m", dest="module", action="store_true",
                        help="the target is a module, as python -m")
    parser.add_argument("target", help="the script (or, with -m, the module) to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")


def find_mpiexec(given: str | None = None) -> str | None:
    if given:
        return given
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    cmd = [mpiexec, "-n", str(args.nproc)]
    if args.hosts and getattr(args, "hostfile", None):
        raise SystemExit("ember run: pass --hosts or --hostfile, not both")
    if args.hosts:
        cmd += ["-hosts", args.hosts]
    if getattr(args, "hostfile", None):
        if not os.path.isfile(args.hostfile):
            raise SystemExit(f"ember run: --hostfile {args.hostfile!r} is not a file; write "
                             "one `host:processes` a line (MPICH's host file)")
        cmd += ["-f", os.path.abspath(args.hostfile)]
    cmd += [sys.executable, "-m", "ember.tools.run", "--rank"]
    return cmd + (["-m"] if args.module else []) + [args.target, *args.args]


def run(args: argparse.Namespace) -> int:
    if args.nproc < 1:
        print(f"ember run: -n must be >= 1, got {args.nproc}", file=sys.stderr)
        return 2
    mpiexec = find_mpiexec(args.mpiexec)
    if mpiexec is None:
        print("ember run: no mpiexec found; pip install ember-mpi (it brings MPICH's "
              "mpiexec), or pass --mpiexec PATH", file=sys.stderr)
        return 2
    if not args.module and not Path(args.target).is_file():
        print(f"ember run: no script at {args.target}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if args.timeout is not None:
        env["EMBER_DISTRIBUTED_TIMEOUT"] = str(args.timeout)
    if args.debug:
        env["EMBER_DISTRIBUTED_DEBUG"] = "1"
    # N processes each with a full set of BLAS threads would fight over the cores
    env.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="ember-run-") as folder:
        env["EMBER_RUN_DIR"] = folder
        return Job(command(args, mpiexec), env, folder, args.nproc).run()


class Job:
    """One mpiexec, its output relayed (and read for MPICH's report of a dead process)."""

    def __init__(self, cmd: list[str], env: dict, folder: str, nproc: int):
        self.cmd, self.env, self.folder, self.nproc = cmd, env, folder, nproc
        self.dead: list[tuple[int, int]] = []       # (pid, exit code) MPICH reported
        self.interrupted = 0

    def run(self) -> int:
        proc = subprocess.Popen(self.cmd, env=self.env, stdout=subprocess.PIPE,
                                start_new_session=True)
        relay = threading.Thread(target=self._relay, args=(proc.stdout,), daemon=True)
        relay.start()
        previous = {s: signal.signal(s, self._forward(proc)) for s in
                    (signal.SIGINT, signal.SIGTERM)}
        try:
            while proc.poll() is None:
                if self.interrupted and time.monotonic() - self.interrupted > GRACE_S:
                    _kill_group(proc)
                time.sleep(0.05)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            _kill_group(proc)               # nothing of the job outlives the launcher
            relay.join(timeout=2)
        return self.report(proc.returncode)

    def _forward(self, proc):
        def handler(signum, frame):
            if self.interrupted:            # a second one: no more waiting
                _kill_group(proc)
                return
            self.interrupted = time.monotonic()
            try:
                proc.send_signal(signum)
            except ProcessLookupError:
                pass
        return handler

    def _relay(self, stream) -> None:
        pid = None
        out = sys.stdout.buffer
        for line in iter(stream.readline, b""):
            out.write(line)
            out.flush()
            text = line.decode(errors="replace")
            found = re.search(r"PID (\d+) RUNNING AT", text)
            if found:
                pid = int(found.group(1))
            found = re.search(r"EXIT CODE: (\d+)", text)
            if found and pid is not None:
                self.dead.append((pid, int(found.group(1))))
                pid = None

    def statuses(self) -> dict[int, dict]:
        found = {}
        for path in Path(self.folder).glob("rank*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            found[record["rank"]] = record
        return found

    def report(self, code: int) -> int:
        if code == 0:
            return 0
        records = self.statuses()
        failed = sorted((r for r in records.values() if r["status"] == "failed"),
                        key=lambda r: r.get("time", 0))
        by_pid = {r["pid"]: r["rank"] for r in records.values()}
        say = []
        if failed:
            first = failed[0]
            say.append(f"rank {first['rank']} failed: {first['error']}")
            if len(failed) > 1:
                say.append("then " + ", ".join(
                    f"rank {r['rank']} ({r['error'].split(':')[0]})" for r in failed[1:]))
        if not failed:
            for pid, exit_code in self.dead:
                rank = by_pid.get(pid)
                who = f"rank {rank} (pid {pid})" if rank is not None else f"pid {pid}"
                say.append(f"{who} {_death(exit_code)}")
                break
        if self.interrupted:
            say.insert(0, "interrupted; the job was stopped")
        if not say:
            say.append(f"mpiexec exited with code {code}")
        print("ember run: " + "; ".join(say) + f" (job of {self.nproc} processes ended, "
              f"exit code {code})", file=sys.stderr, flush=True)
        if self.interrupted:
            return 130
        return failed[0].get("code", code) if failed else code


def _death(code: int) -> str:
    if code > 128 or code in (9, 15, 11, 6):
        number = code - 128 if code > 128 else code
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}"
    return f"exited with code {code}"


def _kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --- each rank's bootstrap -------------------------------------------------------------------

def rank_main(argv: list[str]) -> int:
    """Run a script (or -m module) as this rank of the job; record how it ends."""
    import runpy
    import traceback
    module = argv[:1] == ["-m"]
    target, rest = (argv[1], argv[2:]) if module else (argv[0], argv[1:])
    env = os.environ
    from ember.distributed.group import launch_env
    launch = launch_env()
    if launch is not None:
        for key, value in (("RANK", launch.rank), ("WORLD_SIZE", launch.size),
                           ("LOCAL_RANK", launch.local_rank),
                           ("LOCAL_WORLD_SIZE", launch.local_size)):
            env.setdefault(key, str(value))
    rank = launch.rank if launch is not None else 0
    record = Path(env.get("EMBER_RUN_DIR", tempfile.gettempdir())) / f"rank{rank}.json"
    _write(record, rank, "running")
    if hasattr(os, "fork"):
        child = os.fork()       # before MPI starts: the parent only watches how the rank ends
        if child:
            return _watch(child, record, rank)
        _die_with_parent()
    sys.argv = [target, *rest]
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, str(Path(target).resolve().parent))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code:
            _fail(record, rank, f"exited with code {code}", code)
        _write(record, rank, "ok")
        return 0
    except KeyboardInterrupt:           # the launcher is stopping the job: no traceback
        _write(record, rank, "interrupted")
        os._exit(130)
    except BaseException as exc:  # noqa: BLE001  (every failure ends the job, and says why)
        traceback.print_exc()
        _fail(record, rank, _summary(exc), 1)
    _write(record, rank, "ok")
    return 0


def _summary(exc: BaseException) -> str:
    """The first line of an error, and for a timeout the ranks it names."""
    lines = f"{type(exc).__name__}: {exc}".splitlines()
    named = [x.strip() for x in lines[1:] if x.strip().startswith(("did not arrive",
                                                                   "called something"))]
    return "; ".join(lines[:1] + named)


def _watch(child: int, record: Path, rank: int) -> int:
    """The rank's parent: pass signals on; if the rank dies of one, record which."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda signum, frame: os.kill(child, signum))
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        _write(record, rank, "failed", f"killed by {signal.Signals(number).name}",
               128 + number)
        return 128 + number
    return os.WEXITSTATUS(status)


def _die_with_parent() -> None:
    # mpiexec ends a job by killing the processes it started: the parents
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _write(path: Path, rank: int, status: str, error: str = "", code: int = 0) -> None:
    path.write_text(json.dumps({"rank": rank, "pid": os.getpid(), "status": status,
                                "error": error, "code": code, "time": time.time()}))


def _fail(path: Path, rank: int, error: str, code: int) -> None:
    from ember.distributed.group import end_job
    _write(path, rank, "failed", error, code)
    sys.stderr.flush()
    end_job(code, error)
    os._exit(code)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank"]:
        sys.exit(rank_main(sys.argv[2:]))
    parser = argparse.ArgumentParser(prog="ember run")
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
