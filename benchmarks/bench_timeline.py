"""When each process of a build is busy: the build command on a folder, its process tree's CPU sampled
every 0.1 s (psutil), cut by the run's steps (Dagster's step stats).

    python benchmarks/bench_timeline.py RAW WORK [LABEL] [NAME=VALUE ...]

RAW is a raw folder (`fr/`, `intl/`); the build goes to WORK/LABEL (fresh DAGSTER_HOME and output);
NAME=VALUE are extra environment variables (`POCKET_ASSETS_WORKERS=1`). Run it from the checkout to
measure. Per step it prints wall, CPU, the cores used on average, the peak PSS of the tree, and each
process's CPU: `main` (the run), each `worker` (forked by the step), `fork2` (any process a worker
starts). The workers' split is the part that does
not depend on the machine's load: two workers of unequal CPU leave a core idle for the difference,
whatever the wall clock says on a shared machine. The samples go to WORK/LABEL.timeline.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

PYTHON = sys.executable
SAMPLE_SECONDS = 0.1
PSS_EVERY = 5  # samples: reading every process's smaps is slow


def _kind(process: psutil.Process, root: int) -> str:
    if process.pid == root:
        return "main"
    try:
        parent = process.ppid()
    except psutil.Error:
        return "?"
    return "worker" if parent == root else "fork2"


def sample(command: list[str], env: dict[str, str]) -> tuple[float, list[tuple], list[tuple[float, float]], float]:
    """(start time, CPU samples (t, pid, kind, cpu seconds), tree PSS samples (t, MiB), wall)."""
    started = time.time()
    build = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    threading.Thread(target=build.stdout.read, daemon=True).start()
    root = psutil.Process(build.pid)
    seen: dict[int, float] = {}
    kinds: dict[int, str] = {}
    samples: list[tuple] = []
    pss: list[tuple[float, float]] = []
    tick = 0
    while build.poll() is None:
        now = time.time() - started
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            processes = []
        for process in processes:
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            kinds.setdefault(process.pid, _kind(process, build.pid))
            used = times.user + times.system
            samples.append((now, process.pid, kinds[process.pid], used - seen.get(process.pid, 0.0)))
            seen[process.pid] = used
        tick += 1
        if tick % PSS_EVERY == 0:
            pss.append((now, sum(_pss(process) for process in processes) / 2**20))
        time.sleep(SAMPLE_SECONDS)
    return started, samples, pss, time.time() - started


def _pss(process: psutil.Process) -> float:
    try:
        return process.memory_full_info().pss
    except psutil.Error:
        return 0.0


def steps_of(home: Path, started: float) -> tuple[list[tuple[str, float, float]], tuple[float, float]]:
    from dagster import DagsterInstance

    os.environ["DAGSTER_HOME"] = str(home)
    with DagsterInstance.get() as instance:
        (record,) = instance.get_run_records(limit=1)
        stats = instance.get_run_step_stats(record.dagster_run.run_id)
        run = (record.start_time - started, record.end_time - started)
    return sorted(((s.step_key, s.start_time - started, s.end_time - started) for s in stats), key=lambda s: s[1]), run


def main() -> None:
    raw, work = Path(sys.argv[1]), Path(sys.argv[2])
    label = sys.argv[3] if len(sys.argv) > 3 else "timeline"
    extra = dict(argument.split("=", 1) for argument in sys.argv[4:])
    home, out = work / label / "home", work / label / "out"
    shutil.rmtree(work / label, ignore_errors=True)
    home.mkdir(parents=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), **extra}
    command = [PYTHON, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(out)]
    started, samples, pss, wall = sample(command, env)
    steps, run = steps_of(home, started)
    phases = [("before the run", 0.0, run[0]), *steps, ("after the run", run[1], wall)]
    print(f"wall {wall:.1f} s, cpu {sum(s[3] for s in samples):.1f} s, peak tree PSS {max(m for _, m in pss):.0f} MiB")
    print(f"{'phase':32s} {'start':>6s} {'wall':>6s} {'cpu':>6s} {'cores':>5s} {'MiB':>5s}  cpu per process")
    for name, start, end in phases:
        inside = [s for s in samples if start <= s[0] < end]
        per_process: dict[tuple[str, int], float] = {}
        for _, pid, kind, used in inside:
            per_process[(kind, pid)] = per_process.get((kind, pid), 0.0) + used
        busy = sorted(((kind, used) for (kind, _), used in per_process.items() if used >= 0.05), key=lambda kv: (kv[0], -kv[1]))
        cpu = sum(used for *_, used in inside)
        peak = max([mib for t, mib in pss if start <= t < end] or [0.0])
        print(
            f"{name:32s} {start:6.1f} {end - start:6.1f} {cpu:6.1f} {cpu / max(end - start, 1e-9):5.2f} {peak:5.0f}  "
            + " ".join(f"{kind} {used:.1f}" for kind, used in busy)
        )
    with open(work / f"{label}.timeline.json", "w", encoding="utf-8") as handle:
        json.dump({"samples": samples, "pss": pss, "steps": steps, "run": run, "wall": wall}, handle)


if __name__ == "__main__":
    main()
