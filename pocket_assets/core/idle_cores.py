"""Cores that a step's processes leave idle, lent to the one process that can use more than one.

A step builds its PDFs on a pool of workers, longest first. A long PDF among many
needs no more than its worker: the other workers take the short PDFs beside it. Only
when the pool has no PDF left to start does a worker sit idle, while another may still
scan a long PDF alone (the tail of a run, or a run of that one PDF). Its scan can then
use the idle core (`page_ranges`); before that, another process beside the workers would
only share their cores and add its memory to theirs.

`IdleCores` is that count, kept in shared memory: made in the step's process before its
workers are forked, so every worker sees the same one. The pool says how many of its
workers have nothing to do (`set_idle`); a worker borrows some of them for its scan's
processes and gives them back when its scan ends, so two long PDFs never take the same
core. `AllCores` stands for a PDF built alone: every other core is idle.
"""

from __future__ import annotations

import multiprocessing
from typing import Protocol


class CoreLender(Protocol):
    """Where the extra processes of a scan get their cores from."""

    def borrow(self, wanted: int) -> int:
        """Up to `wanted` cores idle now, no longer lent to anyone else; 0 when none is."""

    def give_back(self, count: int) -> None:
        """Cores borrowed before, idle again for others."""


class IdleCores:
    """The idle workers of a pool of forked processes, shared with them (see the module docstring)."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self._lock = context.Lock()
        self._idle = context.RawValue("i", 0)  # workers of the pool without a PDF
        self._lent = context.RawValue("i", 0)  # of those, cores a worker's scan uses now

    def set_idle(self, count: int) -> None:
        """The pool has `count` workers with nothing to do (set by the pool's process alone)."""
        with self._lock:
            self._idle.value = count

    def reset(self) -> None:
        """Nothing idle, nothing lent: the pool was started again (its workers, and what they borrowed, are gone)."""
        with self._lock:
            self._idle.value = 0
            self._lent.value = 0

    def borrow(self, wanted: int) -> int:
        with self._lock:
            granted = max(0, min(wanted, self._idle.value - self._lent.value))
            self._lent.value += granted
            return granted

    def give_back(self, count: int) -> None:
        with self._lock:
            self._lent.value -= count


class AllCores:
    """A PDF built alone: the other `spare` cores are always its to use."""

    def __init__(self, spare: int) -> None:
        self._spare = spare

    def borrow(self, wanted: int) -> int:
        return max(0, min(wanted, self._spare))

    def give_back(self, count: int) -> None:
        """Nothing to do: nobody else borrows these cores."""
