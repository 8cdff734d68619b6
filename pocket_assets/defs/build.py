"""The resources of the code location, and the same definitions assembled for the build command and tests.

`dagster dev` and `dg` load the `defs/` folder (`pocket_assets/definitions.py`): every
asset, job, sensor and schedule defined at module level there, plus the resources
of `environment_resources` below. `build_definitions` assembles the same objects
by hand for a given raw and output folder; a test keeps the two equal.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import Definitions, definitions

from pocket_assets.defs.assets.chunking import chunks, table_summaries
from pocket_assets.defs.assets.evaluation import child_embeddings, retrieval_eval
from pocket_assets.defs.assets.export import android_export
from pocket_assets.defs.assets.ingest import pages, raw_pdf
from pocket_assets.defs.assets.quality import validated_chunks
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.resources import (
    CorpusPaths,
    EvaluationResource,
    GatesResource,
    SettingResources,
    default_paths,
)
from pocket_assets.defs.schedules import corpus_refresh
from pocket_assets.defs.sensors import raw_pdf_sensor
from pocket_assets.defs.stale_sensor import stale_pdfs

ASSETS = [
    raw_pdf,
    pages,
    chunks,
    table_summaries,
    validated_chunks,
    android_export,
    retrieval_eval,
    child_embeddings,
]


def build_resources(paths: CorpusPaths | None = None) -> dict[str, object]:
    """The resources every asset, sensor and schedule uses; tests pass their own paths."""
    return {
        "paths": paths or default_paths(),
        **SettingResources.from_environment().as_resources(),
        "gates": GatesResource(),
        "workers": WorkersResource(),
        "evaluation": EvaluationResource(
            gold_path=os.environ.get("POCKET_ASSETS_GOLD", str(Path.cwd() / "data" / "gold" / "sample_gold.jsonl"))
        ),
    }


@definitions
def environment_resources() -> Definitions:
    """The resources of the code location `dg` and `dagster dev` load (folders from the environment)."""
    return Definitions(resources=build_resources())


def build_definitions(paths: CorpusPaths | None = None) -> Definitions:
    return Definitions(
        assets=ASSETS,
        jobs=[build_corpus_job],
        schedules=[corpus_refresh],
        sensors=[raw_pdf_sensor, stale_pdfs],
        resources=build_resources(paths),
    )
