"""`pocket-assets build` killed with SIGKILL at moments around the start of its runs: no process it started outlives
it (Dagster's log capture used to leave a `tail -F` of the run's log file running for ever)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from pocket_assets_tests.cli.commands import Command, command_env, session_processes
from pocket_assets_tests.pdf_factory import small_corpus

# (a line the build prints, seconds after it): the build starting, its run starting, its PDFs on the pool, between
# the run of the PDFs and the export's, the export's run.
MOMENTS = (
    ("building ", 0.0),
    ("building ", 0.5),
    ("building ", 1.5),
    ("done, 0 failed]", 0.0),
    ("succeeded for 2 PDFs", 0.0),
    ("succeeded for 2 PDFs", 0.5),
)
GONE_WITHIN = 60  # seconds for the kernel to end the pool's workers (PR_SET_PDEATHSIG) on a loaded machine


def test_no_process_outlives_a_build_killed_at_any_moment(tmp_path: Path) -> None:
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    env = command_env(tmp_path / "home")
    for marker, delay in MOMENTS:
        build = Command.start(["build", "--all", "--raw-dir", str(raw), "--output-dir", str(out)], env, tmp_path)
        build.wait_for(marker)
        time.sleep(delay)
        session = build.process.pid
        at_kill = session_processes(session)
        os.kill(build.process.pid, signal.SIGKILL)
        build.process.wait()
        assert not [command for command in at_kill.values() if command.startswith("tail ")], (
            f"killed after {marker!r} +{delay} s: a tail of the run's log file would outlive it: {at_kill}"
        )
        deadline = time.monotonic() + GONE_WITHIN
        while (left := session_processes(session)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"killed after {marker!r} +{delay} s, these outlived it: {left}"
