"""`pocket-assets` as a user runs it: a real process of its own (its own session), its output read line by line
as it comes, and the processes it left behind."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

READ_TIMEOUT = 300  # seconds a command may take to print a line on this shared machine


@dataclass
class Command:
    """A running `python -m pocket_assets.cli ...`, stdout and stderr merged, every line kept."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)

    @classmethod
    def start(cls, args: Sequence[str], env: Mapping[str, str], cwd: Path, prefix: Sequence[str] = ()) -> Command:
        """`pocket-assets ARGS`, run by the command line `prefix` if any (which ends by exec-ing it)."""
        process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "pocket_assets.cli", *args],
            cwd=cwd,
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its session holds every process it starts, and only those
        )
        command = cls(process)
        threading.Thread(target=command._read, daemon=True).start()
        return command

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, text: str, timeout: float = READ_TIMEOUT) -> str:
        """The first line holding `text` from here on; AssertionError if the command ends or goes silent first."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} within {timeout:.0f} s:\n" + "\n".join(self.lines[-40:])) from None
            if line is None:
                raise AssertionError(f"ended (exit {self.process.wait()}) before a line with {text!r}:\n" + "\n".join(self.lines[-40:]))
            self.lines.append(line)
            if text in line:
                return line

    def finish(self, timeout: float = READ_TIMEOUT) -> int:
        """Read to the end; the exit code."""
        deadline = time.monotonic() + timeout
        while (line := self._queue.get(timeout=max(0.0, deadline - time.monotonic()))) is not None:
            self.lines.append(line)
        return self.process.wait(timeout=max(0.0, deadline - time.monotonic()))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


def session_processes(session: int) -> dict[int, str]:
    """Every living process (zombies aside) of a session, pid -> command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # ended while listed
            continue
        state, _, _, sid = stat.rpartition(")")[2].split()[:4]
        if int(sid) == session and state != "Z":
            found[int(entry.name)] = command
    return found


def command_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a command run on the instance in `home`, with `extra` variables."""
    return {**os.environ, "DAGSTER_HOME": str(home), **extra}
