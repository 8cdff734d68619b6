"""The main job: every per-PDF stage and the export, in one process per run."""

from dagster import AssetSelection, define_asset_job, in_process_executor

BUILD_GROUPS = ("ingest", "chunking", "quality", "export")

build_corpus_job = define_asset_job(
    name="build_corpus",
    selection=AssetSelection.groups(*BUILD_GROUPS),
    executor_def=in_process_executor,
    description="Extract, chunk, summarize, validate and export the selected PDFs "
    "(a multi-PDF run is one process: one tokenizer load for all).",
)
