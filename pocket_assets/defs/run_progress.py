"""A step's progress in its run log: a line every few seconds naming the PDFs done since, with the counts so far.

Each line a step logs is an event the run stores in its database (`context.log` writes it to the
instance's event log, and the UI pages through every one), so one line per PDF would be a third
of a many-PDF run's events. The PDFs done are gathered and written as one line when `interval`
seconds have passed since the step's last line, and at the step's end: a short run still gets its
line, the first PDF done its line at once, a long run a line every few seconds saying how many PDFs of the run are done and how many
failed so far, then each PDF's own outcome. A PDF that fails is also logged at once, on its own
line, by the caller.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

# Seconds between two progress lines of a step: often enough to watch, rare enough to cost nothing.
PROGRESS_INTERVAL_SECONDS = 5.0


@dataclass
class ProgressLog:
    """Gathers PDFs `done` and hands `write` one line when the interval has passed (`flush` at the end)."""

    names: str  # the step's stage name(s), e.g. `pages` or `raw_pdf+pages`
    total: int  # PDFs in the run
    write: Callable[[str], None]
    interval: float = PROGRESS_INTERVAL_SECONDS
    clock: Callable[[], float] = time.monotonic
    _pending: list[str] = field(default_factory=list, init=False)
    _done: int = field(default=0, init=False)
    _failed: int = field(default=0, init=False)
    _last_line_at: float = field(init=False)

    def __post_init__(self) -> None:
        self._last_line_at = float("-inf")  # the first PDF done is shown at once: the run is seen moving

    def done(self, summary: str, failed: bool = False) -> None:
        """One more PDF of the run is done; `summary` says how (`fr/a.pdf: pages 3 rows in 0.4 s`)."""
        self._done += 1
        self._failed += failed
        self._pending.append(summary)
        if self.clock() - self._last_line_at >= self.interval:
            self.flush()

    def failed_later(self) -> None:
        """A PDF counted done earlier failed since (its chunks failed the gates' suite)."""
        self._failed += 1

    def flush(self) -> None:
        """The line for the PDFs gathered since the last one, if any."""
        if not self._pending:
            return
        counts = f"[{self._done}/{self.total} done, {self._failed} failed]"
        self.write(f"{self.names} {counts} " + "; ".join(self._pending))
        self._pending.clear()
        self._last_line_at = self.clock()
