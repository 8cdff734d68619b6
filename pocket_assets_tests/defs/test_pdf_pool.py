"""The run's process pool: every PDF once, as they complete; a PDF that kills its worker fails alone; workers
die with the run's process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from pocket_assets.defs.pdf_pool import build_in_pool
from pocket_assets.stages.pdf_build.outcomes import PdfOutcome, StageResult
from pocket_assets.stages.registry import RAW_PDF

KEYS = [f"fr/{index:02d}.pdf" for index in range(7)]


def _died(key: str, why: str) -> PdfOutcome:
    return PdfOutcome(key, (StageResult(RAW_PDF, "failed", why),))


def _build(key: str) -> PdfOutcome:
    if key == "fr/05.pdf":
        os._exit(3)  # a crash inside native code kills the worker
    return PdfOutcome(key, (StageResult(RAW_PDF, "ok", None, {"pid": os.getpid()}),))


def test_every_pdf_comes_once_from_other_processes_and_a_dead_worker_fails_its_pdf_alone() -> None:
    outcomes = {outcome.key: outcome for outcome in build_in_pool(_build, KEYS, 2, _died)}
    assert sorted(outcomes) == KEYS
    [dead] = outcomes["fr/05.pdf"].results
    assert dead.status == "failed" and "the process building it died" in dead.reason
    good = [outcomes[key].results[0] for key in KEYS if key != "fr/05.pdf"]
    assert all(result.ok and result.metadata["pid"] != os.getpid() for result in good)


def test_one_worker_builds_here_in_order() -> None:
    keys = [key for key in KEYS if key != "fr/05.pdf"]
    outcomes = list(build_in_pool(_build, keys, 1, _died))
    assert [outcome.key for outcome in outcomes] == keys
    assert {outcome.results[0].metadata["pid"] for outcome in outcomes} == {os.getpid()}


def test_workers_die_with_the_run_process(tmp_path: Path) -> None:
    """SIGKILL of the run's process (what the OOM killer sends) leaves no worker to finish a PDF afterwards."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(
        f"""
        import os, time
        from pocket_assets.defs.pdf_pool import build_in_pool
        def build(key):
            with open({str(pids)!r}, "a") as handle:
                handle.write(f"{{os.getpid()}}\\n")
            time.sleep(60)
            open({str(tmp_path / 'written')!r} + key, "w").close()
        for _ in build_in_pool(build, ["a", "b"], 2, lambda key, why: None):
            pass
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = [int(pid) for pid in pids.read_text().split()]
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers), "no worker outlives the run"
    assert not list(tmp_path.glob("written*"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"
