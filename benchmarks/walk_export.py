"""The walk of `android_export`'s `paths`: which of our modules a reader following the folders enters, how often
control climbs back up the layers, and how often it returns.

    python benchmarks/walk_export.py [--raw-dir RAW] [--work WORK] [--walk]

RAW (the repository's `data/raw` by default) is built into WORK/out with the build command (a fresh
`DAGSTER_HOME` in WORK/home; WORK is a temporary folder by default), then `android_export` is materialized
once more in this process, traced. `--walk` prints every move of the walk. Run it from the checkout: its
package is imported, whatever is installed.

A runtime trace rather than a static walk: the calls it follows are the ones that happen (a method on the
store, a closure handed to the writer, a context manager's exit), with no guess at what a name resolves to;
what it cannot see is a branch the export of RAW does not take (a refusal, a PDF left out).

The walk, precisely:

- Followed values: the `CorpusPaths` resource the asset body is given, and every value one of its methods or
  properties returns (`paths.store()`, `paths.scan()`, `raw_path`, `output_path`, `corpus_names`), followed by
  identity. Booleans, numbers, strings and None are not followed: they have no identity of their own. The
  second walk printed also follows every path a followed value's own method or property returns
  (`output_dir / name`, `store.data_path(...)`): where the files under the folders are read and written.
- A frame of ours (a function of a `pocket_assets` module) carries them when one of its arguments (its `self`,
  a closure's captured variables) is a followed value. The walk is the modules of the carrying frames: a call
  to a carrying frame moves it into the callee's module, its return moves it back into the module of the
  carrying frame below; consecutive moves within one module are one stay.
- Each function is read once, as a reader reads it: a carrying call to a function the walk has already entered
  is not followed (nor anything it calls); a generator resumed (a `with` block's exit) continues its visit.
- Layers, from the bottom: core 0, stages 1, export 2, defs 3 (with `pocket_assets.definitions`), cli 4.
- A room is a module the walk enters; an entry, each move into a module (a call or a return); a return, each
  move made by a return.
- A climb back up is a move to a higher layer after which the walk goes down again: a call from a module into
  a higher layer's module (counted whatever follows), or the returns to a higher layer (one or several in a
  row) after which the walk moves down again. The returns that end the walk, back up to the asset, are not
  climbs: nothing descends after them.

Only the run's thread is traced: the threads `PartitionStore.write_manifests` writes with run the store's own
`write_manifest`, a room the walk is in at that moment.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from types import FrameType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's package, not an installed one

from dagster import DagsterInstance, materialize  # noqa: E402

from pocket_assets.defs.assembly import ASSETS, build_resources  # noqa: E402
from pocket_assets.defs.resources import CorpusPaths  # noqa: E402

LAYERS = {"core": 0, "stages": 1, "export": 2, "defs": 3, "definitions": 3, "cli": 4}
ASSET_BODY = ("pocket_assets.defs.assets.export", "android_export")
UNFOLLOWED = (bool, int, float, str, bytes, type(None))


def layer_of(module: str) -> int:
    return LAYERS[module.split(".")[1]]


@dataclass
class Move:
    module: str
    function: str
    by_return: bool


@dataclass
class _Frame:
    frame: FrameType
    module: str
    carrying: bool
    followed: bool  # part of the walk (carrying, and not a function read before, nor inside one)


@dataclass
class Walk:
    """The trace of one asset body: the followed values, the frames of ours on the stack, the moves made."""

    derived: bool = False
    thread: int | None = None
    paths: Any = None
    followed: dict[int, Any] = field(default_factory=dict)  # id -> value (kept, so that an id is not reused)
    stack: list[_Frame] = field(default_factory=list)
    read: set[Any] = field(default_factory=set)  # code objects the walk has entered
    resumed: dict[int, tuple[FrameType, bool]] = field(default_factory=dict)  # generator frames seen, followed
    moves: list[Move] = field(default_factory=list)

    def profile(self, frame: FrameType, event: str, value: Any) -> None:
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("pocket_assets."):
            if self.derived and event == "return" and threading.get_ident() == self.thread:
                self._derive(frame, value)
            return
        if self.thread is None:
            if event != "call" or (module, frame.f_code.co_name) != ASSET_BODY:
                return
            self.thread, self.paths = threading.get_ident(), frame.f_locals["paths"]
            self._follow(self.paths)
        if threading.get_ident() != self.thread:
            return
        if event == "call":
            self._call(frame, module)
        elif self.stack and self.stack[-1].frame is frame:
            self._return(self.stack.pop(), value)

    def _call(self, frame: FrameType, module: str) -> None:
        inside_unfollowed = any(entry.carrying and not entry.followed for entry in self.stack)
        carrying = any(id(value) in self.followed for value in frame.f_locals.values())
        if id(frame) in self.resumed and self.resumed[id(frame)][0] is frame:
            followed = self.resumed[id(frame)][1]
        else:
            followed = carrying and not inside_unfollowed and frame.f_code not in self.read
            self.resumed[id(frame)] = (frame, followed)
        self.stack.append(_Frame(frame, module, carrying, followed))
        if followed:
            self.read.add(frame.f_code)
            self._move(module, frame.f_code.co_name, by_return=False)

    def _return(self, entry: _Frame, value: Any) -> None:
        if entry.frame.f_locals.get("self") is self.paths and not isinstance(value, UNFOLLOWED):
            self._follow(value)
        elif self.derived:
            self._derive(entry.frame, value)
        if entry.followed:
            below = next((other for other in reversed(self.stack) if other.followed), None)
            if below is not None:
                self._move(below.module, below.frame.f_code.co_name, by_return=True)
        if not self.stack:
            self.thread = None

    def _derive(self, frame: FrameType, value: Any) -> None:
        """With `derived`: a path a followed value's method or property returns (`output_dir / name`,
        `store.data_path(...)`) is followed too."""
        if isinstance(value, PurePath) and id(frame.f_locals.get("self")) in self.followed:
            self._follow(value)

    def _follow(self, value: Any) -> None:
        self.followed[id(value)] = value

    def _move(self, module: str, function: str, by_return: bool) -> None:
        if not self.moves or self.moves[-1].module != module:
            self.moves.append(Move(module, function, by_return))


def climbs(moves: list[Move]) -> int:
    """Moves to a higher layer after which the walk goes down again (see the module docstring)."""
    count, pending = 0, False  # pending: a return has brought the walk up; a move down makes it a climb
    for previous, move in zip(moves, moves[1:]):
        up, down = layer_of(move.module) > layer_of(previous.module), layer_of(move.module) < layer_of(previous.module)
        if up and not move.by_return:
            count += 1
            pending = False
        elif up:
            pending = True
        elif down and pending:
            count += 1
            pending = False
    return count


def build(raw_dir: Path, work: Path) -> Path:
    output = work / "out"
    environment = {**os.environ, "DAGSTER_HOME": str(work / "home")}
    (work / "home").mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw_dir), "--output-dir", str(output)]
    built = subprocess.run(command, env=environment, cwd=REPO_ROOT, capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit(f"the build of {raw_dir} failed:\n{built.stdout}{built.stderr}")
    return output


def trace_export(raw_dir: Path, output: Path, derived: bool) -> list[Move]:
    """One materialization of `android_export` over the built `output`, traced."""
    walk = Walk(derived=derived)
    resources = build_resources(CorpusPaths(raw_dir=str(raw_dir), output_dir=str(output)))
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    with DagsterInstance.ephemeral() as instance:
        threading.setprofile(walk.profile)
        sys.setprofile(walk.profile)
        try:
            result = materialize(
                ASSETS, selection=["android_export"], resources=resources, instance=instance, run_config=quiet
            )
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    if not result.success:
        raise SystemExit("android_export failed: the walk is of a successful export")
    return walk.moves


def report(title: str, moves: list[Move], show_walk: bool) -> None:
    print(f"\n## {title}\n")
    if show_walk:
        for move in moves:
            arrow = "<-" if move.by_return else "->"
            print(f"  {'  ' * (4 - layer_of(move.module))}{arrow} {move.module}.{move.function}")
        print()
    entries = Counter(move.module for move in moves)
    print(f"rooms entered: {len(entries)}")
    print(f"climbs back up: {climbs(moves)}")
    print(f"returns: {sum(move.by_return for move in moves)}")
    print(f"the asset's module entered: {entries[ASSET_BODY[0]]}")
    print("entries per room (layer):")
    for module, count in sorted(entries.items(), key=lambda item: (-layer_of(item[0]), item[0])):
        print(f"  {count:3d}  {module} ({layer_of(module)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raw-dir", type=Path, default=REPO_ROOT / "data" / "raw")
    parser.add_argument("--work", type=Path, help="where the build goes (a temporary folder by default)")
    parser.add_argument("--walk", action="store_true", help="print every move of the walks")
    arguments = parser.parse_args()
    raw_dir = arguments.raw_dir.resolve()
    with tempfile.TemporaryDirectory() as temporary:
        output = build(raw_dir, (arguments.work or Path(temporary)).resolve())
        report("paths and what it hands out", trace_export(raw_dir, output, derived=False), arguments.walk)
        report("with the paths derived from them", trace_export(raw_dir, output, derived=True), arguments.walk)


if __name__ == "__main__":
    main()
