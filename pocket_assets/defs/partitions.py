"""One dynamic partition per PDF, keyed by its path under the raw folder (e.g. `fr/faq.pdf`)."""

from typing import Any, Sequence

from dagster import AssetCheckSpec, BackfillPolicy, DynamicPartitionsDefinition, asset

from pocket_assets.defs.resources import environment_policy

pdf_partitions = DynamicPartitionsDefinition(name="pdfs")

# Many PDFs in one run: one process start and one tokenizer load for the whole backfill.
single_run = BackfillPolicy.single_run()

# Who to ask about these assets, shown in the UI.
OWNERS = ["team:corpus-maintainers"]

_POLICY = environment_policy()
# The chunking assets' Dagster code version: a chunker bump or a policy change marks them stale.
CODE_VERSION = _POLICY.code_version
VERSION_TAGS = {"chunker_version": _POLICY.chunker_version, "policy_hash": _POLICY.policy_hash}


def pdf_asset(
    *,
    group_name: str,
    description: str,
    deps: Sequence[Any] = (),
    kinds: Sequence[str] = ("parquet",),
    versioned: bool = False,
    code_version: str | None = None,
    check_specs: Sequence[AssetCheckSpec] | None = None,
):
    """`@asset` for a per-PDF stage: partitioned by PDF, single-run backfills, owned, grouped.

    `versioned` stages depend on the chunk policy and carry its code version and tags;
    others may declare their own `code_version` (the extractor's, for pages).
    """
    return asset(
        partitions_def=pdf_partitions,
        backfill_policy=single_run,
        owners=OWNERS,
        group_name=group_name,
        kinds=set(kinds),
        deps=list(deps),
        description=description,
        check_specs=check_specs,
        code_version=CODE_VERSION if versioned else code_version,
        tags=VERSION_TAGS if versioned else None,
    )
