"""The resources of the code location, and the same definitions assembled for the build command and tests.

`dagster dev` and `dg` load the `defs/` folder (`pocket_assets/definitions.py`): every
asset, job, sensor and schedule defined at module level there, plus the resources and the
executor of `environment_resources` below. `build_definitions` assembles the same objects by
hand for a given raw and output folder; a test keeps the two equal.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import Definitions, LoggerDefinition, definitions, in_process_executor

from pocket_assets.defs.assets.evaluation import child_embeddings, retrieval_eval
from pocket_assets.defs.assets.export import android_export
from pocket_assets.defs.assets.pdf_file import pdf_file
from pocket_assets.defs.assets.pdf_stages import pdf_stages
from pocket_assets.defs.jobs import build_corpus_job, export_corpus_job
from pocket_assets.defs.resources import (
    CorpusPaths,
    EvaluationResource,
    SettingResources,
    WorkersResource,
    default_paths,
)
from pocket_assets.defs.schedules import corpus_refresh
from pocket_assets.defs.sensors import build_changed_pdfs, corpus_export_sensor, pdf_folder_sensor

ASSETS = [pdf_file, pdf_stages, android_export, retrieval_eval, child_embeddings]


def build_resources(paths: CorpusPaths | None = None) -> dict[str, object]:
    """The resources every asset, sensor and schedule uses; tests pass their own paths."""
    return {
        "paths": paths or default_paths(),
        **SettingResources.from_environment().as_resources(),
        "workers": WorkersResource(),
        "evaluation": EvaluationResource(
            gold_path=os.environ.get("POCKET_ASSETS_GOLD", str(Path.cwd() / "data" / "gold" / "sample_gold.jsonl"))
        ),
    }


@definitions
def environment_resources() -> Definitions:
    """The resources of the code location `dg` and `dagster dev` load (folders from the environment), and its
    executor: every run is one process (its PDFs on the run's own pool), launched from a job or the asset graph."""
    return Definitions(resources=build_resources(), executor=in_process_executor)


def build_definitions(paths: CorpusPaths | None = None, loggers: dict[str, LoggerDefinition] | None = None) -> Definitions:
    """Every definition, with `paths` (the environment's by default) and, for the build command, its console."""
    return Definitions(
        assets=ASSETS,
        jobs=[build_corpus_job, export_corpus_job],
        schedules=[corpus_refresh],
        sensors=[pdf_folder_sensor, build_changed_pdfs, corpus_export_sensor],
        resources=build_resources(paths),
        executor=in_process_executor,
        loggers=loggers,
    )
