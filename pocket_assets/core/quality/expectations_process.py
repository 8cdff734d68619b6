"""Great Expectations in a process of its own, started early, so that its import is off the build's path.

Importing GE and loading the suites takes ~4 s of CPU, a third of a one-PDF build. The
build does not need GE before its chunks are made, so `prestart` launches this module as
a fresh interpreter (`python -m pocket_assets.core.quality.expectations_process DIR`) at
the start of a build: it imports GE and loads the suites on the other core while the
build imports Dagster, extracts and chunks, then answers requests (the partition suite
over a batch of PDFs, whose stage files it reads itself: the build sends paths, not
columns; the corpus suite) one at a time over its stdin and stdout.

A long build starts it later (`starts_early`): its `table_summaries` step starts it once
its workers are gone, so that the import runs on the core the run leaves idle then, not
beside the workers (memory). The caller may send a request before the answer to the
previous one is read (`submit_partition_suite`: a thread of the client sends requests
and reads answers in order), so the build sends every batch at once and judges its PDFs
while this process judges the batches.

Why not `multiprocessing`'s forkserver with GE preloaded: every process it forks first
re-imports the parent's `__main__` (`spawn.prepare`); under a Dagster run worker that is
the `dagster` command, whose import costs seconds per process. Why one process, not a
pool: batched (`expectation_batches`), the suite costs ~0.2 s per batch of PDFs plus
~0.2 ms per chunk, small beside the rest of a PDF's work.

The process ends when its stdin closes: when the build closes it, or when the build dies.
Any request sent before the suites are loaded waits for them. An error (a suite that does
not load, a request that fails) comes back as `ExpectationsProcessError` with the
process's traceback; a process that died says so, with its exit code.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, Mapping, Sequence

from pocket_assets.core.quality.deferred_imports import defer_imports
from pocket_assets.core.quality.validation import Columns, GateReport, GateResult

_READY = "ready"
_OK = "ok"
_ERROR = "error"


class ExpectationsProcessError(RuntimeError):
    """The expectations process could not load the suites or answer a request; the message says why."""


class ExpectationsProcess:
    """A client of one expectations process (one expectations folder). Requests go through one thread
    of the client, which sends each and reads its answer, so they are answered in the order submitted."""

    def __init__(self, expectations_dir: Path) -> None:
        self.expectations_dir = expectations_dir
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(expectations_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_child_environment(),
        )
        self._ready = False
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="expectations-process")

    def partition_suite(
        self, files_by_key: Mapping[str, Sequence[Path]], parent_tokens: int, max_tokens: int
    ) -> dict[str, tuple[GateResult, ...]]:
        """Each PDF's partition-suite results over its chunks' stage files, which the process reads
        (`expectation_batches.expectations_for_files`)."""
        return self.submit_partition_suite(files_by_key, parent_tokens, max_tokens).result()

    def submit_partition_suite(
        self, files_by_key: Mapping[str, Sequence[Path]], parent_tokens: int, max_tokens: int
    ) -> Future[dict[str, tuple[GateResult, ...]]]:
        """`partition_suite`, returning at once: the caller judges its PDFs meanwhile."""
        files = {key: [str(path) for path in paths] for key, paths in files_by_key.items()}
        return self._sender.submit(self._ask, "partition_suite", files, parent_tokens, max_tokens)

    def corpus_suite(self, columns: Columns, label: str = "corpus") -> GateReport:
        """`validation.validate_corpus_ids` over these columns."""
        return self._sender.submit(self._ask, "corpus_suite", dict(columns), label).result()

    def close(self) -> None:
        self._sender.shutdown(wait=True)
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait()

    def _ask(self, request: str, *arguments: Any) -> Any:
        """On the sender thread: one request sent and its answer read."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        try:
            if not self._ready:
                self._answer(stdout)
                self._ready = True
            pickle.dump((request, arguments), stdin, protocol=pickle.HIGHEST_PROTOCOL)
            stdin.flush()
        except BrokenPipeError:
            raise self._died() from None
        return self._answer(stdout)

    def _answer(self, stdout: BinaryIO) -> Any:
        try:
            status, value = pickle.load(stdout)
        except EOFError:
            raise self._died() from None
        if status == _ERROR:
            raise ExpectationsProcessError(f"Great Expectations ({self.expectations_dir}): {value}")
        return value

    def _died(self) -> ExpectationsProcessError:
        code = self._process.wait()
        return ExpectationsProcessError(
            f"the Great Expectations process for {self.expectations_dir} ended (exit code {code}); see its output above"
        )


def _child_environment() -> dict[str, str]:
    """This process's environment, with this copy of the project first on the path (a worktree, a test
    checkout), whatever the working folder."""
    project_root = str(Path(__file__).resolve().parents[3])
    path = os.pathsep.join(part for part in (project_root, os.environ.get("PYTHONPATH", "")) if part)
    return {**os.environ, "PYTHONPATH": path}


_PROCESSES: dict[Path, ExpectationsProcess] = {}
_LOCK = threading.Lock()


# A run of at most this many PDFs starts the process at its start, so that GE's seconds of loading
# overlap the run's extraction and chunking (the one-PDF build's critical path). A longer run starts
# it once its last workers (`table_summaries`') are gone (the process's ~180 MiB held beside them set the
# build's memory peak): the import then runs beside the step's own work on a core that would idle.
EARLY_START_MAX_PDFS = 8


def starts_early(pdf_count: int) -> bool:
    """Whether a run building `pdf_count` PDFs starts the process before it needs it."""
    return pdf_count <= EARLY_START_MAX_PDFS


def prestart(expectations_dir: Path) -> ExpectationsProcess:
    """The process for this folder, started now if it is not running yet (returns at once)."""
    folder = expectations_dir.resolve()
    with _LOCK:
        process = _PROCESSES.get(folder)
        if process is None or process._process.poll() is not None:
            process = _PROCESSES[folder] = ExpectationsProcess(folder)
        return process


def expectations_process(expectations_dir: Path) -> ExpectationsProcess:
    """Same as `prestart`: the caller's first request waits for the suites."""
    return prestart(expectations_dir)


def expectations_dir_from(environ: Mapping[str, str], root: Path) -> Path:
    """`POCKET_ASSETS_EXPECTATIONS_DIR`, else `expectations/` under the project root."""
    return Path(environ.get("POCKET_ASSETS_EXPECTATIONS_DIR", str(root / "expectations")))


@atexit.register
def close_all() -> None:
    """End every expectations process of this process and wait for it (it exits at once: `_main`)."""
    for process in _PROCESSES.values():
        process.close()


def serve(expectations_dir: Path, requests: BinaryIO, answers: BinaryIO) -> None:
    """The process's side: load the suites, say so, then answer each request until `requests` ends."""
    from pocket_assets.core.quality.expectation_batches import expectations_for_files
    from pocket_assets.core.quality.validation import corpus_ids_on_columns, load_gates

    try:
        gates = load_gates(expectations_dir)
    except Exception:
        _send(answers, _ERROR, traceback.format_exc())
        return
    _send(answers, _READY, None)
    handlers = {
        "partition_suite": lambda files, *caps: expectations_for_files(
            gates, {key: [Path(path) for path in paths] for key, paths in files.items()}, *caps
        ),
        "corpus_suite": lambda *arguments: corpus_ids_on_columns(gates, *arguments),
    }
    while True:
        try:
            request, arguments = pickle.load(requests)
        except EOFError:
            return
        try:
            _send(answers, _OK, handlers[request](*arguments))
        except Exception:
            _send(answers, _ERROR, traceback.format_exc())


def _send(answers: BinaryIO, status: str, value: Any) -> None:
    pickle.dump((status, value), answers, protocol=pickle.HIGHEST_PROTOCOL)
    answers.flush()


def _main() -> None:
    # The answers go to the pipe the parent reads; anything printed (GE, warnings) goes to stderr instead.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    defer_imports()  # what GE imports and the suites never use (~1 s of CPU): run only if used
    serve(Path(sys.argv[1]), sys.stdin.buffer, answers)
    # Every answer is flushed and the process writes no file: tearing down an interpreter holding GE,
    # pandas and scipy (~0.5 s) would only make the build that waits for it (`close`) finish later.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    _main()
