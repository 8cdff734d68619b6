"""One dynamic partition per PDF, keyed by its path under the raw folder (e.g. `fr/faq.pdf`), built in ranges.

Many PDFs are built by runs over ranges of partitions: a multi-run backfill policy whose
range size is `POCKET_ASSETS_RANGE_SIZE` (read when the code location loads), large enough
that a run's fixed cost (a process, its imports, the tokenizer and the gates) stays small
beside its PDFs. The instance's run queue starts the runs side by side.

The per-PDF assets are declared from the stage registry (`stages.registry`): the asset
key is the stage's name, its dependencies are the stage's upstream stages, and its
Dagster code version is the stage's version under the settings the environment
configures (tokenizer, chunk policy, summarizer, extraction options).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from dagster import AssetSpec, BackfillPolicy, DynamicPartitionsDefinition, TableColumn, TableSchema

from pocket_assets.stages.registry import Stage

pdf_partitions = DynamicPartitionsDefinition(name="pdfs")

RANGE_SIZE_ENV = "POCKET_ASSETS_RANGE_SIZE"
# PDFs per run: a run's fixed cost (imports, tokenizer, Great Expectations) is worth paying for several PDFs,
# and a corpus of a few dozen regulations fits one run.
DEFAULT_RANGE_SIZE = 50

# Who to ask about these assets, shown in the UI.
OWNERS = ["team:corpus-maintainers"]


def range_size(environ: Mapping[str, str] = os.environ) -> int:
    """PDFs per run: `POCKET_ASSETS_RANGE_SIZE`, else `DEFAULT_RANGE_SIZE`."""
    configured = environ.get(RANGE_SIZE_ENV, "").strip()
    if not configured:
        return DEFAULT_RANGE_SIZE
    size = int(configured)
    if size < 1:
        raise ValueError(f"{RANGE_SIZE_ENV} must be a positive number of PDFs per run, got {configured!r}")
    return size


def range_backfill_policy() -> BackfillPolicy:
    return BackfillPolicy.multi_run(max_partitions_per_run=range_size())


def stage_spec(
    stage: Stage,
    *,
    group_name: str,
    description: str,
    code_version: str | None,
    kinds: set[str],
    deps: Sequence[str] = (),
) -> AssetSpec:
    """A per-PDF stage as an asset of the per-PDF step: partitioned by PDF, depending on its upstream stages (and
    `deps`), materialized PDF by PDF (skippable: a PDF that fails gets no materialization)."""
    return AssetSpec(
        stage.name,
        deps=[*deps, *(upstream.name for upstream in stage.upstream)],
        description=description,
        group_name=group_name,
        kinds=kinds,
        owners=OWNERS,
        code_version=code_version,
        partitions_def=pdf_partitions,
        skippable=True,
        metadata=stage_metadata(stage),
    )


def stage_metadata(stage: Stage) -> dict[str, Any]:
    """The asset's own metadata: its column schema, the same for every PDF (the UI's Columns tab)."""
    return {"dagster/column_schema": column_schema(stage.schema)}


def column_schema(schema: pa.Schema) -> TableSchema:
    return TableSchema(columns=[TableColumn(name=field.name, type=str(field.type)) for field in schema])
