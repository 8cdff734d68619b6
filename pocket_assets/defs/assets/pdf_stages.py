"""The per-PDF stages, `raw_pdf` to `validated_chunks`: one step builds a run's range of PDFs.

Each stage is an asset of its own (its lineage, versions, checks and per-PDF history in the
UI); one step makes them all, PDF by PDF (`stages.pdf_build`), so a PDF that fails is
reported failed at the stage it did not pass and after, and the others go on
(`pdf_events`). A subset of the stages can be selected; the stages before it are read back
from their stage files. The export is another asset (`android_export`), run once after a
build or backfill; each PDF's export piece is kept as its `validated_chunks` is written
(`export.kept_pieces`), so that the export renders only the PDFs that changed.
"""

from collections.abc import Iterator, Sequence
from functools import partial

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetObservation,
    AssetSpec,
    multi_asset,
)

from pocket_assets.defs.assets.pdf_file import PDF_FILE
from pocket_assets.defs.gate_checks import CHECK_SPECS, gate_check_results
from pocket_assets.defs.partitions import pdf_partitions, range_backfill_policy, stage_spec
from pocket_assets.defs.pdf_events import PdfEvents
from pocket_assets.defs.pdf_pool import build_in_pool
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    DeviceProfileResource,
    ExtractionResource,
    GatesResource,
    SettingResources,
    SummarizerResource,
    TokenizerResource,
    WorkersResource,
)
from pocket_assets.export.kept_pieces import write_export_piece
from pocket_assets.stages.pdf_build.gates import BatchedSuiteGate
from pocket_assets.stages.pdf_build.plan import BuildPlan
from pocket_assets.stages.pdf_build.runner import build_pdf, page_counts, record_death
from pocket_assets.stages.planner import duplicates_among
from pocket_assets.stages.registry import (
    CHILDREN,
    PAGES,
    PARENTS,
    RAW_PDF,
    STAGES,
    TABLE_SUMMARIES,
    VALIDATED_CHUNKS,
    Stage,
)
from pocket_assets.stages.store import remove_dead_temps


def stage_specs() -> list[AssetSpec]:
    """The per-PDF stages as assets, versioned by the environment's settings (read when the code location loads).
    A function, not a module-level list: the defs folder's loader takes module-level specs for assets of their own."""
    versions = SettingResources.from_environment().versions()
    return [
        stage_spec(
            RAW_PDF,
            deps=[PDF_FILE],
            group_name="ingest",
            kinds={"pdf", "parquet"},
            code_version=versions[RAW_PDF],
            description="One PDF of the corpus: corpus, file name, sha256, size, page count and PDF metadata. Fails that "
            "PDF (only) if it is not a PDF, truncated beyond repair, encrypted or has no pages.",
        ),
        stage_spec(
            PAGES,
            group_name="ingest",
            kinds={"pdf", "parquet"},
            code_version=versions[PAGES],
            description="One row per page: canonical Markdown text, blocks with char spans, warnings (empty or "
            "image-only pages), and the page's span and first line in the document text.",
        ),
        stage_spec(
            PARENTS,
            group_name="chunking",
            kinds={"parquet"},
            code_version=versions[PARENTS],
            description="~1024-token parent chunks (15% overlap) for LLM context, cut at headings, paragraphs, list items "
            "and sentences, never inside a table; every DESIGN.md chunk field filled.",
        ),
        stage_spec(
            CHILDREN,
            group_name="chunking",
            kinds={"parquet"},
            code_version=versions[CHILDREN],
            description="~450-token child chunks (15% overlap; as large as the phone's embedder window allows) inside "
            "their parent, for embedding and search; what the phone's embedder reads (its prompt + context header + "
            "text + citation + its special tokens) never exceeds the device profile's window.",
        ),
        stage_spec(
            TABLE_SUMMARIES,
            group_name="chunking",
            kinds={"parquet"},
            code_version=versions[TABLE_SUMMARIES],
            description="A ~50-token summary per table (chunk_type table_summary), typed schedule/scoring/other, linked to "
            "the parent holding the table; extractive offline by default, an LLM endpoint on demand.",
        ),
        stage_spec(
            VALIDATED_CHUNKS,
            group_name="quality",
            kinds={"parquet", "great_expectations"},
            code_version=versions[VALIDATED_CHUNKS],
            description="Parents, children and table summaries of a PDF that passed every gate; only these are exported. "
            "A PDF failing a gate keeps its previous good file (the export ships it as stale) and shows failed.",
        ),
    ]

@multi_asset(
    name="pdf_stages",
    specs=stage_specs(),
    check_specs=CHECK_SPECS,
    partitions_def=pdf_partitions,
    backfill_policy=range_backfill_policy(),
    can_subset=True,
)
def pdf_stages(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    extraction: ExtractionResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    device: DeviceProfileResource,
    summarizer: SummarizerResource,
    gates: GatesResource,
    workers: WorkersResource,
) -> Iterator[AssetCheckResult | AssetMaterialization | AssetObservation]:
    stages = tuple(stage for stage in STAGES if AssetKey(stage.name) in context.selected_asset_keys)
    settings = SettingResources(extraction, tokenizer, chunk_policy, device, summarizer, gates)
    plan = build_plan(paths, settings, stages, context.run.run_id, context.partition_keys)
    store = plan.store
    for leftover in remove_dead_temps(store.root):
        context.log.info(f"removed {leftover.name}, a temp file of a build that was killed")
    counts = page_counts(store, context.partition_keys)
    keys = sorted(context.partition_keys, key=lambda key: (-counts[key], key))  # the longest first
    events = PdfEvents(context, stages, len(keys), plan.versions)
    keep_piece = partial(write_export_piece, store, schema_dir=gates.expectations_path)
    suite = BatchedSuiteGate(plan, gates.gates(), keep_piece) if VALIDATED_CHUNKS in stages else None
    for outcome in build_in_pool(partial(build_pdf, plan), keys, workers.count(), partial(record_death, plan)):
        yield from events.record(outcome)
        for verdict in suite.add(outcome) if suite else ():
            yield from events.record(verdict)
    for verdict in suite.flush() if suite else ():
        yield from events.record(verdict)
    yield from gate_check_results(context, paths, events.failed())
    events.finish(keys)


def build_plan(
    paths: CorpusPaths, settings: SettingResources, stages: Sequence[Stage], run_id: str, keys: Sequence[str]
) -> BuildPlan:
    """What every PDF of a run over `keys` is built with, from the run's resources (each loaded once, here)."""
    tokenizer, summarizer = settings.tokenizer, settings.summarizer
    policy = settings.chunk_policy.policy(tokenizer, settings.device)
    store = paths.store()
    return BuildPlan(
        store=store,
        raw_dir=paths.raw_path,
        corpora=paths.corpus_names,
        stages=tuple(stages),
        versions=settings.versions(),
        settings=settings.settings(),
        run_id=run_id,
        extraction=settings.extraction.options(),
        counter=tokenizer.counter(),
        policy=policy,
        summarizer=summarizer.summarizer(tokenizer.counter(), policy.summary_tokens),
        summary_cache=paths.output_path / "cache" if summarizer.kind == "llm" else None,
        chunk_schema=settings.gates.chunk_schema(),
        reports_dir=paths.output_path / "reports" / "validation",
        duplicates={} if paths.keep_duplicates else duplicates_among(
            store, paths.raw_path, paths.scan().keys, keys, paths.corpus_names
        ),
    )
