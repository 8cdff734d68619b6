"""PDFs built in worker processes: started in the order given, taken as they complete; one PDF's error or
crash fails that PDF alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pocket_assets.core.errors import PdfError
from pocket_assets.defs.pdf_workers import (
    MadeInBatches,
    WorkerDied,
    build_in_workers,
    default_workers,
)

KEYS = [f"fr/{index:02d}.pdf" for index in range(7)]


def _outcome(built, key):
    try:
        return built(key)
    except Exception as error:  # noqa: BLE001 - the test looks at which error came back
        return error


def _build(key: str) -> tuple[str, int]:
    if key == "fr/03.pdf":
        raise PdfError(key, "broken", page=2)  # its constructor is not (message,): must still come back
    if key == "fr/05.pdf":
        os._exit(3)  # a crash inside native code kills the worker
    return key, os.getpid()


def test_every_pdf_comes_once_from_other_processes_and_failures_stay_with_their_pdf() -> None:
    results = {key: _outcome(built, key) for key, built in build_in_workers(_build, KEYS, workers=2)}
    assert sorted(results) == KEYS
    broken = results["fr/03.pdf"]
    assert type(broken) is PdfError and (broken.source, broken.page, str(broken)) == ("fr/03.pdf", 2, "fr/03.pdf, page 2: broken")
    assert isinstance(results["fr/05.pdf"], WorkerDied) and "fr/05.pdf" in str(results["fr/05.pdf"])
    good = {key: value for key, value in results.items() if key not in ("fr/03.pdf", "fr/05.pdf")}
    assert [value[0] for value in good.values()] == list(good)
    assert all(pid != os.getpid() for _, pid in good.values())


def test_a_long_pdf_started_first_holds_no_finished_one_back(tmp_path: Path) -> None:
    """The long PDF waits until the test has received every short one: taken in the order started, the
    short ones would only come after it, and it would give up waiting."""
    finished_short = tmp_path / "short-ones-received"

    def build(key: str) -> str:
        if key != "a-long.pdf":
            return "short"
        deadline = time.monotonic() + 60
        while not finished_short.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return "saw the short ones first" if finished_short.exists() else "gave up waiting"

    keys = ["a-long.pdf", "b.pdf", "c.pdf", "d.pdf"]
    results = {}
    for key, built in build_in_workers(build, keys, workers=2):
        results[key] = built(key)
        if set(results) == set(keys[1:]):
            finished_short.touch()
    assert list(results) == [*keys[1:], "a-long.pdf"]
    assert results["a-long.pdf"] == "saw the short ones first"


def test_one_worker_builds_in_the_calling_process() -> None:
    results = [built(key) for key, built in build_in_workers(_build, KEYS[:3], workers=1)]
    assert results == [(key, os.getpid()) for key in KEYS[:3]]


def test_made_in_batches_at_the_first_key_asked_and_a_failed_pdf_raises_at_its_turn() -> None:
    made_keys: list[str] = []

    def made(key: str) -> int:
        made_keys.append(key)
        if key == "fr/01.pdf":
            raise PdfError(key, "unreadable")
        return int(key[3:5])

    judged = MadeInBatches(made, [KEYS[:3], KEYS[3:5]])
    assert judged(KEYS[0]) == 0 and made_keys == KEYS[:3]  # the whole batch, at its first key
    assert isinstance(_outcome(judged, KEYS[1]), PdfError)
    assert judged(KEYS[2]) == 2 and made_keys == KEYS[:3]
    assert judged(KEYS[6]) == 6 and made_keys == [*KEYS[:3], KEYS[6]]  # in no batch: made alone
    assert [judged(key) for key in KEYS[3:5]] == [3, 4] and made_keys == [*KEYS[:3], KEYS[6], *KEYS[3:5]]


def test_the_worker_count_comes_from_the_environment_or_the_usable_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "3")
    assert default_workers() == 3
    monkeypatch.delenv("POCKET_ASSETS_WORKERS")
    assert default_workers() == len(os.sched_getaffinity(0))
