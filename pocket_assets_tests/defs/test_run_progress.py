"""The per-PDF steps' progress lines: a few per step, every PDF named, the counts of PDFs done and failed so far."""

from typing import Callable

from pocket_assets.defs.run_progress import ProgressLog


def _clock(times: list[float]) -> Callable[[], float]:
    return lambda: times[0]


def test_pdfs_done_within_the_interval_share_one_line_written_at_the_end() -> None:
    lines: list[str] = []
    now = [0.0]
    progress = ProgressLog("pages", 3, lines.append, interval=5.0, clock=_clock(now))
    for index, key in enumerate(["fr/a.pdf", "fr/b.pdf", "intl/c.pdf"], start=1):
        now[0] += 1.0
        progress.done(f"{key}: pages {index} rows in 1.0 s")
    assert lines == ["pages [1/3 done, 0 failed] fr/a.pdf: pages 1 rows in 1.0 s"], "the first PDF at once"
    progress.flush()
    progress.flush()  # nothing new: no second line
    assert lines[1:] == ["pages [3/3 done, 0 failed] fr/b.pdf: pages 2 rows in 1.0 s; intl/c.pdf: pages 3 rows in 1.0 s"]


def test_a_line_every_interval_names_the_pdfs_done_since_the_last() -> None:
    lines: list[str] = []
    now = [0.0]
    progress = ProgressLog("parents+children", 100, lines.append, interval=5.0, clock=_clock(now))
    for index in range(1, 101):
        now[0] += 0.5
        progress.done(f"d{index}.pdf: parents 1 rows, children 2 rows in 0.5 s")
    progress.flush()
    assert len(lines) == 11, lines
    assert lines[0].startswith("parents+children [1/100 done, 0 failed] d1.pdf: parents 1 rows")
    assert lines[1].startswith("parents+children [11/100 done, 0 failed] d2.pdf: parents 1 rows")
    assert lines[-1].startswith("parents+children [100/100 done, 0 failed] d92.pdf")
    named = [f"d{index}.pdf:" for index in range(1, 101)]
    assert all(sum(name in line for line in lines) == 1 for name in named), "every PDF on exactly one line"


def test_failures_are_counted_as_failures_not_as_built() -> None:
    """Five PDFs, one failed while building and one whose chunks failed the suite later: the line says so."""
    lines: list[str] = []
    progress = ProgressLog("raw_pdf+pages", 5, lines.append, interval=5.0, clock=_clock([0.0]))
    for index in range(1, 5):
        progress.done(f"fr/{index}.pdf: pages 3 rows in 0.1 s")
    progress.done("fr/broken.pdf: FAILED at raw_pdf in 0.1 s", failed=True)
    progress.failed_later()
    progress.flush()
    assert lines[-1] == (
        "raw_pdf+pages [5/5 done, 2 failed] fr/2.pdf: pages 3 rows in 0.1 s; "
        "fr/3.pdf: pages 3 rows in 0.1 s; fr/4.pdf: pages 3 rows in 0.1 s; fr/broken.pdf: FAILED at raw_pdf in 0.1 s"
    )


def test_a_pdf_done_after_a_quiet_interval_is_shown_at_once() -> None:
    lines: list[str] = []
    now = [0.0]
    progress = ProgressLog("raw_pdf", 3, lines.append, interval=5.0, clock=_clock(now))
    progress.done("fr/small.pdf: raw_pdf 1 rows in 0.1 s")
    now[0] = 7.0
    progress.done("fr/big.pdf: raw_pdf 1 rows in 7.0 s")
    assert lines[-1] == "raw_pdf [2/3 done, 0 failed] fr/big.pdf: raw_pdf 1 rows in 7.0 s"
