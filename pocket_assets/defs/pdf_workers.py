"""Build the PDFs of a step on every core: one PDF per task in forked worker processes, started in the
order given (longest first), consumed as they complete.

A step's `build(key)` is a closure over loaded resources (the tokenizer, the policy,
the store). Workers are forked from the step's process after those loads, so they
share them (copy on write: the tokenizer's ~115 MiB is paid once) and need nothing
pickled but the key; each returns what it made of one PDF. The caller gives the keys
longest first (`per_pdf`: by page count), so that a 2,400-page manual starts at once
and the other workers take the short PDFs beside it, instead of it running alone on
one core at the end; results are handed back as they complete, so a long PDF at the
head holds no finished one back (nor a worker idle). Each PDF's outputs are files of
its own, so their bytes do not depend on this order. At most two PDFs per worker are
in flight, so memory holds a few PDFs' results, not the corpus.

Per-PDF failure isolation holds as in the serial loop: a PDF's exception is
re-raised for that PDF alone, same type (with the worker's traceback as a note), and a
worker that dies (a crash in native code) fails only the PDFs it held; the pool
is started again for the rest.

`workers` 1 (or a single PDF) runs in the calling process, exactly the serial loop.
The default is the cores this process may use (`POCKET_ASSETS_WORKERS` overrides).

The `pages` step also scans a PDF of `split_pages` pages or more over page ranges
(`core/extract/page_ranges`) in processes forked from whichever process builds it, on
cores left idle: every other core for a PDF built in the step's own process (the only
one), and in the pool only the cores of workers that have no PDF left to build
(`core/idle_cores`; the pool tells `step_cores()` how many as PDFs complete). Longest
first, a long PDF among many needs no help: the other workers build the rest beside it.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Generic, Iterator, Sequence, TypeVar

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.carried_errors import CarriedError
from pocket_assets.core.errors import PdfError

Output = TypeVar("Output")
Made = TypeVar("Made")
Build = Callable[[str], Output]

WORKERS_ENV = "POCKET_ASSETS_WORKERS"
_IN_FLIGHT_PER_WORKER = 2

# The step's build function, set in the parent just before the fork; workers inherit it.
_BUILD: Build | None = None


class WorkerDied(PdfError):
    """The worker process building this PDF ended abnormally (a crash inside MuPDF): about that PDF."""


def default_workers() -> int:
    """`POCKET_ASSETS_WORKERS`, else the cores this process may run on (so `taskset -c 0` means 1)."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured:
        return max(1, int(configured))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class WorkersResource(ConfigurableResource):
    """How many processes build the PDFs of a step (extraction); 1 builds them in the step's process."""

    workers: int = Field(
        default=0, description=f"Worker processes per step; 0: ${WORKERS_ENV}, else the cores this process may use."
    )

    def count(self) -> int:
        return self.workers if self.workers > 0 else default_workers()


def build_in_workers(build: Build, keys: Sequence[str], workers: int) -> Iterator[tuple[str, Build]]:
    """`(key, built)` for every key, where `built(key)` returns the PDF's output or raises its error:
    started in the order of `keys`, yielded as they complete (in the order of `keys` with one worker).

    The caller treats `built` as it would `build`: `for key, built in ...: run(built, key)`.
    """
    if workers <= 1 or len(keys) <= 1:
        yield from ((key, build) for key in keys)
        return
    global _BUILD
    _BUILD = build
    # Forked workers must not start tokenizers' Rust thread pool again (it would deadlock);
    # one worker per core is the parallelism now.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    # Objects alive now are shared with the workers; the cyclic GC would write to every one of them
    # (copying their pages into each worker) unless they are moved out of its reach first.
    gc.freeze()
    pending = deque(keys)
    in_flight: dict[Future, str] = {}  # in the order started
    pool = _new_pool(workers)
    try:
        while pending or in_flight:
            while pending and len(in_flight) < workers * _IN_FLIGHT_PER_WORKER:
                key = pending.popleft()
                in_flight[pool.submit(_build_in_worker, key)] = key
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in [future for future in in_flight if future in done]:
                key = in_flight.pop(future)
                try:
                    output = future.result()
                except BrokenProcessPool:
                    # Which PDF killed its worker is unknown: each PDF that was in flight runs again alone.
                    pool.shutdown(cancel_futures=True)
                    for held in [key, *in_flight.values()]:
                        yield held, _alone(held)
                    in_flight.clear()
                    pool = _new_pool(workers)
                    break
                yield key, _result(output)
    finally:
        pool.shutdown(cancel_futures=True)
        gc.unfreeze()
        _BUILD = None


class MadeInBatches(Generic[Made]):
    """`made(key)` for every key of a batch at once, at the first of them asked for; each key's output handed
    back (or its error raised) at its own turn. The batches are known beforehand (another process judges
    them meanwhile): so this process judges a batch in one go, then waits for that process's verdicts
    once, and holds a batch's outputs at a time. A key in no batch is made alone, at its turn."""

    def __init__(self, made: Callable[[str], Made], batches: Sequence[Sequence[str]]) -> None:
        self._made = made
        self._batch_of = {key: batch for batch in batches for key in batch}
        self._ready: dict[str, Build] = {}

    def __call__(self, key: str) -> Made:
        if key not in self._ready:
            for one in self._batch_of.get(key, (key,)):
                self._batch_of.pop(one, None)
                try:
                    self._ready[one] = _returner(self._made(one))
                except Exception as error:  # about this PDF or not, it is raised at its turn, as in the serial loop
                    self._ready[one] = _raiser(error)
        return self._ready.pop(key)(key)


def _new_pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))


def _alone(key: str) -> Build:
    with _new_pool(1) as pool:
        try:
            return _result(pool.submit(_build_in_worker, key).result())
        except BrokenProcessPool as error:
            return _raiser(WorkerDied(key, f"the worker process building it died ({error})"))


def _build_in_worker(key: str) -> object:
    """Runs in a worker; a PDF's error comes back as a value (see `CarriedError`)."""
    assert _BUILD is not None, "workers are forked after the build function is set"
    try:
        return _BUILD(key)
    except Exception as error:
        return CarriedError.of(error)


def _result(output: object) -> Build:
    return _raiser(output.rebuild()) if isinstance(output, CarriedError) else _returner(output)


def _returner(output: object) -> Build:
    return lambda _key: output


def _raiser(error: BaseException) -> Build:
    def built(_key: str) -> object:
        raise error

    return built
