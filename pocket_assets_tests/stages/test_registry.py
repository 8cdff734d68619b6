"""The stage registry: lineage order, and versions that change exactly where a setting is read."""

import pytest

from pocket_assets.stages.registry import (
    CHILDREN,
    CHUNKING,
    EXTRACTION,
    GATES,
    PAGES,
    PARENTS,
    RAW_PDF,
    STAGES,
    SUMMARIZER,
    TABLE_SUMMARIES,
    VALIDATED_CHUNKS,
    Setting,
    stage_named,
    stage_versions,
)

SETTINGS = {
    EXTRACTION: Setting("extract-v1", {"ocr": False}),
    CHUNKING: Setting("hier-v1", {"child_tokens": 450, "tokenizer": "gemma3"}),
    SUMMARIZER: Setting("extractive", {"kind": "extractive"}),
    GATES: Setting("gates", {"files": "0123456789abcdef"}),
}


def test_lineage_order_puts_every_stage_after_its_upstream() -> None:
    for index, stage in enumerate(STAGES):
        assert all(STAGES.index(upstream) < index for upstream in stage.upstream), stage
    assert stage_named("children") is CHILDREN
    with pytest.raises(KeyError, match="not a per-PDF stage"):
        stage_named("android_export")


def _changed_stages(setting: str, value: Setting) -> set[str]:
    before = stage_versions(SETTINGS)
    after = stage_versions({**SETTINGS, setting: value})
    return {stage.name for stage in STAGES if before[stage] != after[stage]}


def test_a_setting_changes_the_version_of_the_stages_that_read_it_and_after() -> None:
    after_pages = {"pages", "parents", "children", "table_summaries", "validated_chunks"}
    assert _changed_stages(EXTRACTION, Setting("extract-v1", {"ocr": True})) == after_pages
    assert _changed_stages(CHUNKING, Setting("hier-v1", {"child_tokens": 300, "tokenizer": "gemma3"})) == (
        after_pages - {"pages"}
    )
    assert _changed_stages(SUMMARIZER, Setting("llm:m", {"kind": "llm", "model": "m"})) == {
        "table_summaries",
        "validated_chunks",
    }
    assert _changed_stages(SUMMARIZER, SETTINGS[SUMMARIZER]) == set(), "the same settings, the same versions"
    assert _changed_stages(GATES, Setting("gates", {"files": "fedcba9876543210"})) == {"validated_chunks"}


def test_versions_are_readable_and_unversioned_stages_have_none() -> None:
    versions = stage_versions(SETTINGS)
    assert versions[RAW_PDF] is None
    assert versions[PAGES].startswith("extract-v1+")
    assert versions[PARENTS].startswith("extract-v1+hier-v1+") and versions[PARENTS] == versions[CHILDREN]
    assert versions[TABLE_SUMMARIES].startswith("extract-v1+hier-v1+extractive+")
    assert VALIDATED_CHUNKS.setting_names() == (EXTRACTION, CHUNKING, SUMMARIZER, GATES)


def test_a_missing_setting_is_a_programming_error() -> None:
    with pytest.raises(KeyError, match="needs settings"):
        PARENTS.version({EXTRACTION: SETTINGS[EXTRACTION]})
