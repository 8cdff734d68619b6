"""The build command's main process with its cyclic collections timed: how many of each generation, and
their CPU seconds, summed over the build (`gc.callbacks`), and the process's CPU.

    python benchmarks/bench_gc.py RAW WORK

RAW is a raw folder (`fr/`, `intl/`); the build goes to WORK (DELETED first: a fresh DAGSTER_HOME and
output). Run it from the checkout to measure: the checkout's package is imported. Workers forked by the
steps inherit the probe but are not counted (their sums stay in their own memory).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's package, not an installed one


def main() -> None:
    raw, work = Path(sys.argv[1]), Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ.update(
        DAGSTER_HOME=str(work / "home"), POCKET_ASSETS_RAW_DIR=str(raw), POCKET_ASSETS_OUTPUT_DIR=str(work / "out")
    )
    spent: dict[int, list[float]] = {}
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.process_time()
            return
        count_seconds = spent.setdefault(info["generation"], [0, 0.0])
        count_seconds[0] += 1
        count_seconds[1] += time.process_time() - started[0]

    gc.callbacks.append(timed)
    from pocket_assets.cli import main as cli_main

    begun = time.process_time()
    code = cli_main(["build"])
    collections = {f"gen{generation}": (int(n), round(s, 3)) for generation, (n, s) in sorted(spent.items())}
    print(json.dumps({"collections (count, cpu s)": collections, "main cpu s": round(time.process_time() - begun, 2), "exit": code}))


if __name__ == "__main__":
    main()
