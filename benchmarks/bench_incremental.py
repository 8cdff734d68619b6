"""What a build costs when little or nothing changed: full, no-op and one-changed-PDF builds.

For each corpus size, copies of `../shared/corpus` + `../shared/corpus-regs` (17 PDFs, 504 pages a copy)
under distinct names (`name_c00.pdf`, `name_c01.pdf`, ...), built by the real command
(`pocket-assets build --raw-dir ... --output-dir ...`, a fresh DAGSTER_HOME and output folder per size, every
copy built and exported: `POCKET_ASSETS_KEEP_DUPLICATES=1`):

- full: the first build of the folder;
- no-op: the same command again, nothing changed (it must start no run);
- one changed PDF: another PDF's bytes copied over one PDF (`CHANGED_TARGET` <- `CHANGED_SOURCE`, both
  from the copy `_c00`), then the same command.

Each row gives wall and CPU seconds (user + sys of the whole process tree, from wait4), the peak PSS of the
process tree (sampled every 0.2 s by `bench_build`'s sampler, pages shared after fork counted once) and how it
splits between the command's process and its workers at that peak, and the bytes the tree wrote
(`ru_oublock` * 512 from wait4: write_bytes of every process of the tree, workers included once reaped),
beside the runs the command started and the 1-minute load average when it started.

    .venv/bin/python benchmarks/bench_incremental.py                        # 1k, 5k and 20k pages
    .venv/bin/python benchmarks/bench_incremental.py --sizes 1k --verify    # also: one-changed = full build's files
    .venv/bin/python benchmarks/bench_incremental.py --command /other/checkout/.venv/bin/pocket-assets  # before

`--keep` keeps the corpora and outputs; `--again` then measures the no-op and one-changed builds again on them
(the one changed PDF switched back and forth), e.g. after a change to the export.

`--verify` builds the changed folder again from scratch and compares the export files byte for byte with
the one-changed build's (the corpus JSON's `generated` stamp aside).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import (  # noqa: E402 - the sibling benchmark's runner, sampler and corpus copier
    DEFAULT_CORPUS,
    DEFAULT_REGS,
    MIB,
    REPO_ROOT,
    Measure,
    _tree_pids,
    copy_corpus,
    differing_outputs,
    measure,
    process_pss,
)

COPIES = {"1k": 2, "5k": 10, "20k": 40}
# The copies hold the same bytes: every one is built and exported, as the tester's were (a build skips duplicates).
KEEP_DUPLICATES = "POCKET_ASSETS_KEEP_DUPLICATES"  # 504 pages a copy: 1,008, 5,040 and 20,160 pages
CHANGED_TARGET = "fr/04_reglement-disciplinaire-type-2004_c00.pdf"  # 4 pages
CHANGED_SOURCE = "fr/03_reglement-disciplinaire-type-2002_c00.pdf"


@dataclass(frozen=True)
class Row:
    """One build command: what it cost (`bench_build.Measure`), how its peak split, the runs it started."""

    build: str
    measure: Measure
    split: dict[str, float]  # MiB at the tree's peak: the command's process, and its workers together
    runs: int


class PeakSplit:
    """A `bench_build.measure` tree sampler that also keeps each process's PSS at the tree's peak."""

    def __init__(self) -> None:
        self.root: int | None = None
        self.at_peak: dict[int, int] = {}

    def __call__(self, root: int) -> int:
        self.root = root
        sizes = {pid: process_pss(pid) for pid in _tree_pids(root)}
        if sum(sizes.values()) > sum(self.at_peak.values()):
            self.at_peak = sizes
        return sum(sizes.values())

    def split(self) -> dict[str, float]:
        command = self.at_peak.get(self.root, 0) if self.root is not None else 0
        return {"command": command / MIB, "workers": (sum(self.at_peak.values()) - command) / MIB}


def run_build(command: str, raw: Path, out: Path, home: Path, label: str) -> Row:
    """The build command to its end, with `bench_build.measure` (wait4's CPU and blocks written, the tree sampled)."""
    sampler = PeakSplit()
    env = {**os.environ, "DAGSTER_HOME": str(home), KEEP_DUPLICATES: "1"}
    result = measure([command, "build", "--raw-dir", str(raw), "--output-dir", str(out)], env, sampler)
    row = Row(label, result, sampler.split(), len(re.findall(r"^run \S+ (?:succeeded|FAILED)", result.stdout, flags=re.MULTILINE)))
    print(
        f"    {label}: {result.wall:.1f} s wall (load {result.load:.1f}), {result.cpu:.1f} s cpu, {result.tree_peak_mib:.0f} MiB "
        f"(command {row.split['command']:.0f}, workers {row.split['workers']:.0f}), {result.written_mib:.0f} MiB written, "
        f"{row.runs} run(s), exit {result.returncode}",
        file=sys.stderr,
        flush=True,
    )
    return row


def corpus_of_size(work: Path, size: str) -> Path:
    """Copies of corpus + corpus-regs under distinct names, `COPIES[size]` of them."""
    raw = work / f"raw-{size}"
    shutil.rmtree(raw, ignore_errors=True)
    for copy in range(COPIES[size]):
        copy_corpus(DEFAULT_CORPUS, raw, f"_c{copy:02d}")
        copy_corpus(DEFAULT_REGS, raw, f"_c{copy:02d}")
    return raw


def measure_size(command: str, work: Path, size: str, verify: bool, again: bool) -> list[Row]:
    raw, out, home = work / f"raw-{size}", work / f"out-{size}", work / f"home-{size}"
    if not again:
        corpus_of_size(work, size)
        for folder in (out, home):
            shutil.rmtree(folder, ignore_errors=True)
        home.mkdir(parents=True)
    print(f"  {size}: {len(list(raw.rglob('*.pdf')))} PDFs, {COPIES[size] * 504} pages", file=sys.stderr, flush=True)
    rows = [] if again else [run_build(command, raw, out, home, "full")]
    rows.append(run_build(command, raw, out, home, "no-op"))
    changed = filecmp.cmp(raw / CHANGED_SOURCE, raw / CHANGED_TARGET, shallow=False)
    original = DEFAULT_REGS / Path(CHANGED_TARGET.replace("_c00", ""))
    shutil.copyfile(original if changed else raw / CHANGED_SOURCE, raw / CHANGED_TARGET)
    rows.append(run_build(command, raw, out, home, "one changed PDF"))
    if verify:
        fresh_out, fresh_home = work / f"out-{size}-fresh", work / f"home-{size}-fresh"
        shutil.rmtree(fresh_out, ignore_errors=True)
        shutil.rmtree(fresh_home, ignore_errors=True)
        fresh_home.mkdir(parents=True)
        run_build(command, raw, fresh_out, fresh_home, "full build of the changed folder (--verify)")
        exports = [name for name in differing_outputs(out, fresh_out) if not name.endswith(".parquet")]
        differing = [name for name in exports if not name.startswith("id_redirects_")]
        print(f"    --verify: export files differing from a full build's: {differing or 'none'}", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", choices=sorted(COPIES), default=["1k", "5k", "20k"])
    parser.add_argument("--command", default=str(REPO_ROOT / ".venv" / "bin" / "pocket-assets"), help="the build command")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-incremental", help="corpora and outputs (deleted after)"
    )
    parser.add_argument("--verify", action="store_true", help="compare the one-changed build's exports with a full build's")
    parser.add_argument("--keep", action="store_true", help="keep the corpora and outputs")
    parser.add_argument(
        "--again", action="store_true", help="no full build: the no-op and one-changed builds on what --keep left in --work"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    table = []
    try:
        for size in args.sizes:
            table += [(size, row) for row in measure_size(args.command, args.work, size, args.verify, args.again)]
    finally:
        if not args.keep and not args.again:
            shutil.rmtree(args.work, ignore_errors=True)
    print(f"`{args.command}`, {os.cpu_count()} cores shared")
    print()
    print("| pages | build | wall s (load) | cpu s | peak tree PSS MiB (command + workers) | written MiB | runs |")
    print("|---|---|---|---|---|---|---|")
    for size, row in table:
        m, split = row.measure, row.split
        print(
            f"| {COPIES[size] * 504:,} | {row.build} | {m.wall:.1f} ({m.load:.1f}) | {m.cpu:.1f} | "
            f"{m.tree_peak_mib:.0f} ({split['command']:.0f} + {split['workers']:.0f}) | {m.written_mib:.0f} | {row.runs} |"
        )


if __name__ == "__main__":
    main()
