"""A run's PDFs built side by side: one plain process pool per run, the longest PDFs first.

Parallelism across runs is Dagster's (the run queue starts runs side by side, each in a
process or a pod of its own); inside a run, its PDFs go to a `ProcessPoolExecutor` of
`workers` processes forked from the run's process, so they share what the run loaded once
(PyMuPDF, the tokenizer, the gates) instead of loading it again. The longest PDFs start
first, so that no worker is left with a long one at the end while the others idle.

Workers die with the run's process (`PR_SET_PDEATHSIG`): a run killed by the system (the
OOM killer sends SIGKILL) leaves no worker finishing a PDF and writing its files afterwards.
A worker that dies (a crash inside MuPDF) fails only the PDFs it held: each of them is built
again alone, so the one that kills its worker is named and the others are built.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from pocket_assets.stages.pdf_build.outcomes import PdfOutcome

Build = Callable[[str], PdfOutcome]
# Records and returns the failure of a PDF whose worker died while building it (given the sentence why).
Died = Callable[[str, str], PdfOutcome]

# The build function, set in the run's process just before the fork; the workers inherit it.
_BUILD: Build | None = None
_PR_SET_PDEATHSIG = 1


def build_in_pool(build: Build, keys: Sequence[str], workers: int, died: Died) -> Iterator[PdfOutcome]:
    """`build(key)` for every key, in the order given, yielded as each completes; in this process with one
    worker or one PDF. A PDF that kills its worker alone is `died(key, why)`."""
    if workers <= 1 or len(keys) <= 1:
        yield from map(build, keys)
        return
    global _BUILD
    _BUILD = build
    try:
        pending = list(keys)
        while pending:
            pending = yield from _pool_pass(pending, min(workers, len(pending)), died)
    finally:
        _BUILD = None


def _pool_pass(keys: list[str], workers: int, died: Died) -> Iterator[PdfOutcome]:
    """One pool over `keys`; returns the keys left to build when a worker died (those it may have held,
    built again alone first, then the rest in a new pool)."""
    with _fork_pool(workers) as pool:
        running: dict[Future[PdfOutcome], str] = {pool.submit(_build_here, key): key for key in keys}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in [future for future in running if future in done]:
                key = running.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool:
                    suspects = [key, *(held for held in running.values())]
                    for suspect in suspects[: workers]:
                        yield _alone(suspect, died)
                    pool.shutdown(cancel_futures=True)
                    return suspects[workers:]
    return []


def _alone(key: str, died: Died) -> PdfOutcome:
    """The PDF in a pool of its own: built, or failed as the one that kills its worker."""
    with _fork_pool(1) as pool:
        try:
            return pool.submit(_build_here, key).result()
        except BrokenProcessPool as error:
            return died(key, f"the process building it died ({error}); the file may crash PyMuPDF")


def _build_here(key: str) -> PdfOutcome:
    assert _BUILD is not None, "workers are forked after the build function is set"
    return _BUILD(key)


def _fork_pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent, initargs=(os.getpid(),)
    )


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when the run's process dies (a no-op elsewhere); and end at once if it
    died already, between the fork and this request, which then never comes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the run's process, which stops its workers
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)
