"""One PDF through the per-PDF stages, in whichever process builds it.

`build_pdf` runs the stages a run selected for one PDF: it reads each stage's input from the stage
store, calls the core library (`builders`), writes the output and its manifest (`manifests`), and says
how each stage went in a `PdfOutcome`. Any error while building a PDF is that PDF's failure: its
manifest says why, its last good files stay, the stages after it are skipped, and the other PDFs go on.
An error that is no bug (`PdfError`: unreadable file, broken page; an LLM endpoint's failure; a full or
read-only disk) is one sentence saying whose it is; anything else is a crash and carries its traceback.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from pocket_assets.core.errors import PdfError, system_fix
from pocket_assets.core.tables.summarizer import EndpointError
from pocket_assets.stages.output_folder import inside
from pocket_assets.stages.pdf_build.builders import BUILDERS
from pocket_assets.stages.pdf_build.gates import check_before_suite
from pocket_assets.stages.pdf_build.manifests import record_attempt, store_output
from pocket_assets.stages.pdf_build.outcomes import STATUS_DUPLICATE, AwaitingSuite, PdfOutcome, StageResult
from pocket_assets.stages.pdf_build.plan import BuildPlan
from pocket_assets.stages.registry import CHILDREN, PAGES, PARENTS, RAW_PDF, TABLE_SUMMARIES, VALIDATED_CHUNKS, Stage
from pocket_assets.stages.store import STATUS_FAILED, STATUS_SKIPPED, PartitionStore, UpstreamNotReady


def build_pdf(plan: BuildPlan, key: str) -> PdfOutcome:
    """Every selected stage of one PDF, in lineage order; see the module docstring. A partition key that leaves
    the raw folder (`fr/../../x.pdf`, added by hand through the API) is refused before anything is read or written;
    a copy of another PDF of its corpus is not built (skipped, naming the PDF built in its place)."""
    refusal = key_refusal(key, plan.raw_dir)
    if refusal is not None:
        return PdfOutcome(key, tuple(StageResult(stage, STATUS_FAILED, refusal) for stage in plan.stages))
    if key in plan.duplicates:
        why = f"not built: a copy of {plan.duplicates[key]} (the same bytes in the same corpus), built in its place"
        return PdfOutcome(key, tuple(StageResult(stage, STATUS_DUPLICATE, why) for stage in plan.stages))
    started = time.perf_counter()
    results: list[StageResult] = []
    awaiting_suite: AwaitingSuite | None = None
    crash: str | None = None
    blocked: str | None = None  # why the stages after a failed one are skipped
    for step in _steps(plan.stages):
        if blocked is not None:
            results += [record_attempt(plan, stage, key, STATUS_SKIPPED, blocked) for stage in step]
            continue
        try:
            if step == (VALIDATED_CHUNKS,):
                awaiting_suite = check_before_suite(plan, key)
                continue
            outputs = BUILDERS[step](plan, key)
            results += [store_output(plan, stage, key, outputs[stage]) for stage in step]
        except Exception as error:
            status = STATUS_SKIPPED if isinstance(error, UpstreamNotReady) else STATUS_FAILED
            reason = _expected_sentence(error)
            if reason is None:
                crash = traceback.format_exc()
                reason = f"crashed while building it ({type(error).__name__}: {error}); this is a bug, please report it"
            results += [record_attempt(plan, stage, key, status, reason) for stage in step]
            blocked = f"not built: {step[-1]} failed for this PDF"
    return PdfOutcome(key, tuple(results), round(time.perf_counter() - started, 3), crash, awaiting_suite)


# The computations that make the stages, in lineage order: parents and children come from one chunking pass.
STEPS: tuple[tuple[Stage, ...], ...] = ((RAW_PDF,), (PAGES,), (PARENTS, CHILDREN), (TABLE_SUMMARIES,), (VALIDATED_CHUNKS,))


def record_death(plan: BuildPlan, key: str, why: str) -> PdfOutcome:
    """The failure of a PDF whose building process died (a crash inside native code): every selected stage
    failed, recorded in its manifests like any other failure."""
    reason = str(PdfError(key, why))
    return PdfOutcome(key, tuple(record_attempt(plan, stage, key, STATUS_FAILED, reason) for stage in plan.stages))


def key_refusal(key: str, raw_dir: Path) -> str | None:
    """Why a partition key cannot name a PDF of the raw folder (absolute, or climbing out of it); None if it can."""
    try:
        inside(raw_dir, key)
    except ValueError as error:
        return f"refused: the partition key {error}; a PDF is built only from inside the raw folder"
    return None


def _steps(stages: Sequence[Stage]) -> list[tuple[Stage, ...]]:
    """The computations the selected stages need (selecting parents alone still chunks, and writes both)."""
    return [step for step in STEPS if any(stage in stages for stage in step)]


def _expected_sentence(error: Exception) -> str | None:
    """Why a stage failed when it is no bug, in one sentence: the PDF's (`PdfError`), a stage before it not ready,
    the LLM endpoint's (its answer, and what to check), or the disk's (full, read-only, permissions: what to do);
    None for a crash."""
    if isinstance(error, (PdfError, UpstreamNotReady)):
        return str(error)
    if isinstance(error, EndpointError):
        return f"{error}; the endpoint's answer, not a bug: check its URL, the model and the API key, or set the summarizer's fallback_to_extractive"
    fix = system_fix(error)
    return None if fix is None else f"could not build it: {fix}"


def page_counts(store: PartitionStore, keys: Sequence[str]) -> dict[str, int]:
    """Each PDF's page count as `raw_pdf` last recorded it (0 when it has none, or it cannot be read): the
    order that keeps every worker busy to the end starts with the longest."""
    counts = {}
    for key in keys:
        try:
            identity = store.read_last_good(RAW_PDF, key, ["page_count"])
        except (ValueError, OSError):  # a key that leaves the store, a damaged file: that PDF's build says so
            identity = None
        counts[key] = identity.column(0)[0].as_py() or 0 if identity is not None and identity.num_rows else 0
    return counts
