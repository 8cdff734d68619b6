"""The jobs: the per-PDF stages over a range of PDFs, and the export, each a run in one process.

`build_corpus` never holds the export: a backfill over many ranges would otherwise rewrite the
published files once per run, each time with only the PDFs built so far. The export runs once
the PDFs of a build or backfill are done (`export_corpus`, launched by `pocket-assets build` or
the `corpus_export_sensor`).
"""

from dagster import AssetSelection, define_asset_job, in_process_executor

from pocket_assets.stages.registry import STAGES

BUILD_CORPUS = "build_corpus"
EXPORT_CORPUS = "export_corpus"

build_corpus_job = define_asset_job(
    name=BUILD_CORPUS,
    selection=AssetSelection.assets(*(stage.name for stage in STAGES)),
    executor_def=in_process_executor,
    description="Extract, chunk, summarize and validate the selected PDFs: one run per range of PDFs, its PDFs "
    "built side by side in the run's process pool. The export follows once the build or backfill is done.",
)

export_corpus_job = define_asset_job(
    name=EXPORT_CORPUS,
    selection=AssetSelection.assets("android_export"),
    executor_def=in_process_executor,
    description="Write every corpus's export files from each PDF's last good validated chunks, at once.",
)
