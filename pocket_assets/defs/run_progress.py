"""A step's progress in its run log: one line every few seconds naming the PDFs built since, not one per PDF.

Each line a step logs is an event the run stores in its database (`context.log`
writes it to the instance's event log: ~5-15 ms apiece in SQLite, and as many rows
for the UI to page through). One line per PDF and step was a third of the events of
a many-PDF run. So the PDFs built are gathered and written as one line when
`interval` seconds have passed since the step's last line, and at the step's end:
a short run still gets its line, a long one a line every few seconds with the last
PDF's place in the run (`[i/N]`) and every PDF's own rows and seconds. A PDF that
fails is not held back: `per_pdf` logs it at once, on its own line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

# Seconds between two progress lines of a step: often enough to watch, rare enough to cost nothing.
PROGRESS_INTERVAL_SECONDS = 5.0


@dataclass
class ProgressLog:
    """Gathers `built` PDFs and hands `write` one line when the interval has passed (`flush` at the end)."""

    names: str  # the step's stage name(s), e.g. `pages` or `parents+children`
    total: int  # PDFs in the run
    write: Callable[[str], None]
    interval: float = PROGRESS_INTERVAL_SECONDS
    clock: Callable[[], float] = time.monotonic
    _pending: list[tuple[int, str]] = field(default_factory=list, init=False)
    _last_line_at: float = field(init=False)

    def __post_init__(self) -> None:
        self._last_line_at = self.clock()  # the step's start: a first PDF that takes long is shown at once

    def built(self, index: int, summary: str) -> None:
        """PDF number `index` of the run is built; `summary` says so (`fr/a.pdf: pages 3 rows in 0.4 s`)."""
        self._pending.append((index, summary))
        if self.clock() - self._last_line_at >= self.interval:
            self.flush()

    def flush(self) -> None:
        """The line for the PDFs gathered since the last one, if any."""
        if not self._pending:
            return
        last = self._pending[-1][0]
        summaries = [summary for _, summary in self._pending]
        if len(summaries) == 1:
            self.write(f"{self.names} [{last}/{self.total}] {summaries[0]}")
        else:
            first = self._pending[0][0]
            self.write(
                f"{self.names} [{last}/{self.total}] {len(summaries)} PDFs built ([{first}] to [{last}]): "
                + "; ".join(summaries)
            )
        self._pending.clear()
        self._last_line_at = self.clock()
