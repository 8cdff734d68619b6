"""Where a build's memory is, step by step: every process's PSS over time, by role.

    python benchmarks/memory_timeline.py WORK LABEL RAW_DIR

runs the build command on RAW_DIR (fresh `DAGSTER_HOME` and output folder under WORK/LABEL),
samples every process of its tree every 0.1 s (proportional set size, so pages shared after
a fork count once in the sum), names each by role (`main`: the CLI and step process; `w`: a
pool worker it forked; `r`: any process a worker starts), and once a second what each large process's pages are (`/proc/PID/smaps`: the
glibc heap, anonymous mappings, libraries). Then, per Dagster step (its start and end from the
run's step stats), the tree's peak, who made it up, and each process's own peak. The samples
are kept in WORK/LABEL.timeline.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import psutil

PYTHON = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
_LIBRARY_FAMILIES = ("arrow", "parquet", "tokenizers", "mupdf", "numpy", "pandas", "python3", "libc", "scipy")


def role(process: psutil.Process, root: psutil.Process) -> str:
    if process.pid == root.pid:
        return "main"
    return "w" if process.ppid() == root.pid else "r"


def mapping_kinds(pid: int) -> dict[str, int]:
    """PSS (KiB) by kind of mapping: `[heap]`, `anon`, `[stack]`, or a library family."""
    kinds: dict[str, int] = defaultdict(int)
    kind = "anon"
    with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as smaps:
        for line in smaps:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                fields = line.split(None, 5)
                path = fields[5].strip() if len(fields) > 5 else ""
                kind = path if path.startswith("[") or not path else "other file"
                kind = kind or "anon"
                kind = next((family for family in _LIBRARY_FAMILIES if family in path), kind)
            elif line.startswith("Pss:"):
                kinds[kind] += int(line.split()[1])
    return dict(kinds)


def sample_tree(pid: int, samples: list, kinds: list, done: threading.Event) -> None:
    root = psutil.Process(pid)
    while not done.wait(0.1):
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        row = []
        for process in processes:
            try:
                row.append((role(process, root), process.pid, process.memory_full_info().pss // MIB))
            except psutil.Error:
                pass
        samples.append((time.time(), row))
        if len(samples) % 10 == 0:
            try:
                kinds.append((time.time(), {f"{r}{p}": mapping_kinds(p) for r, p, mib in row if mib > 40}))
            except OSError:
                pass


def main() -> None:
    work, label, raw = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    home, out = work / label / "home", work / label / "out"
    shutil.rmtree(work / label, ignore_errors=True)
    home.mkdir(parents=True)
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    command = [PYTHON, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(out)]
    build = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples: list = []
    kinds: list = []
    done = threading.Event()
    sampler = threading.Thread(target=sample_tree, args=(build.pid, samples, kinds, done), daemon=True)
    sampler.start()
    build.wait()
    done.set()
    sampler.join()
    os.environ["DAGSTER_HOME"] = str(home)
    from dagster import DagsterInstance

    with DagsterInstance.get() as instance:
        (record,) = instance.get_run_records(limit=1)
        steps = [(s.step_key, s.start_time, s.end_time) for s in instance.get_run_step_stats(record.dagster_run.run_id)]
    (work / f"{label}.timeline.json").write_text(json.dumps({"samples": samples, "kinds": kinds, "steps": steps}))
    report(samples, kinds, steps, record.start_time, build.returncode)


def report(samples: list, kinds: list, steps: list, run_start: float, returncode: int) -> None:
    def phase(at: float) -> str:
        inside = [key for key, start, end in steps if start <= at <= end]
        return inside[0] if inside else "before the run" if at < run_start else "between or after steps"

    start = samples[0][0]
    peaks: dict[str, list] = {}
    for at, row in samples:
        entry = peaks.setdefault(phase(at), [0, 0.0, [], defaultdict(int)])
        total = sum(mib for _, _, mib in row)
        if total > entry[0]:
            entry[:3] = [total, at, row]
        for name, pid, mib in row:
            entry[3][f"{name}{pid}"] = max(entry[3][f"{name}{pid}"], mib)
    print(f"exit {returncode}, {samples[-1][0] - start:.0f} s; tree peak {max(p[0] for p in peaks.values())} MiB")
    print("| phase | tree peak MiB (at s) | made of | each process's own peak |")
    print("|---|---|---|---|")
    for name, (total, at, row, own) in peaks.items():
        made_of = " + ".join(f"{r} {mib}" for r, _, mib in sorted(row, key=lambda item: -item[2]) if mib >= 10)
        largest = ", ".join(f"{k} {v}" for k, v in sorted(own.items(), key=lambda item: -item[1])[:4] if v >= 10)
        print(f"| {name} | {total} ({at - start:.0f}) | {made_of} | {largest} |")
        if kinds:
            near_at, near = min(kinds, key=lambda entry: abs(entry[0] - at))
            for process, by_kind in near.items():
                largest_first = sorted(by_kind.items(), key=lambda item: -item[1])
                parts = ", ".join(f"{kind} {kib // 1024}" for kind, kib in largest_first if kib > 2048)
                print(f"|  | {process} at {near_at - start:.0f} s: {parts} | | |")


if __name__ == "__main__":
    main()
