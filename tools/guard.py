"""Plugin code run under a deadline with its output captured: a hang or a print of a
plugin cannot hang the CLI or break the JSON it writes."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

# Plugin imports and backend probes should take well under a second (the hookspecs ask
# them to touch no device); a cold GPU driver can take seconds.  `--timeout` raises it.
DEFAULT_TIMEOUT = 5.0


@dataclass(frozen=True)
class Outcome:
    """What a guarded call did: finished (with a result or an error) or not, how long."""

    finished: bool
    result: object = None
    error: BaseException | None = None
    seconds: float = 0.0


# the threads of calls that did not finish in time (see abandoned())
_ABANDONED: list[threading.Thread] = []


def abandoned() -> list[threading.Thread]:
    """The guarded calls still running past their deadline.  The interpreter's shutdown
    would stop each inside whatever C or C++ code it is in (a driver, PoCL): a C++ frame
    stopped that way aborts the whole process ("terminate called without an active
    exception", status 134), possibly before the report on stdout is flushed; the console
    script ends the process at once instead (ember_cli.console)."""
    return [t for t in _ABANDONED if t.is_alive()]


def call(fn, *args, timeout: float = DEFAULT_TIMEOUT) -> Outcome:
    """fn(*args) in a daemon thread, waited for at most `timeout` seconds.  A call that
    does not finish is left running (Python cannot stop a thread) and reported as such;
    being a daemon, it does not keep the process alive."""
    box: dict = {}

    def target():
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001  (the caller decides what an error means)
            box["error"] = exc

    start = time.perf_counter()
    thread = threading.Thread(target=target, daemon=True,
                              name=f"ember-guard-{getattr(fn, '__name__', 'call')}")
    thread.start()
    thread.join(timeout)
    seconds = round(time.perf_counter() - start, 3)
    if thread.is_alive():
        _ABANDONED.append(thread)
        return Outcome(False, seconds=seconds)
    return Outcome(True, box.get("result"), box.get("error"), seconds)


class Capture:
    """While active, everything written to stdout and stderr (Python's streams and file
    descriptors 1 and 2, so C libraries and child processes too) goes to temporary files;
    `take()` returns what arrived since the previous take, as {'stdout', 'stderr'}."""

    def __enter__(self) -> Capture:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        self._streams = (sys.stdout, sys.stderr)
        self._files, self._saved, self._writers, self._marks = [], [], [], []
        for fd in (1, 2):
            sink = tempfile.TemporaryFile()
            self._files.append(sink)
            self._marks.append(0)
            try:
                self._saved.append(os.dup(fd))
                os.dup2(sink.fileno(), fd)
            except OSError:            # no such descriptor: Python-level capture only
                self._saved.append(None)
            self._writers.append(open(sink.fileno(), "w", encoding="utf-8",  # noqa: SIM115
                                      errors="replace", buffering=1, closefd=False))
        sys.stdout, sys.stderr = self._writers
        return self

    def take(self) -> dict:
        out = {}
        for i, name in enumerate(("stdout", "stderr")):
            with contextlib.suppress(Exception):
                self._writers[i].flush()
            end = os.fstat(self._files[i].fileno()).st_size
            data = os.pread(self._files[i].fileno(), end - self._marks[i], self._marks[i])
            self._marks[i] = end
            out[name] = data.decode("utf-8", errors="replace")
        return out

    def __exit__(self, *exc) -> None:
        for writer in self._writers:
            with contextlib.suppress(Exception):
                writer.flush()
        sys.stdout, sys.stderr = self._streams
        for fd, saved in zip((1, 2), self._saved):
            if saved is not None:
                os.dup2(saved, fd)
                os.close(saved)
        for writer, sink in zip(self._writers, self._files):
            with contextlib.suppress(Exception):
                writer.close()
            sink.close()


def empty_output() -> dict:
    return {"stdout": "", "stderr": ""}
