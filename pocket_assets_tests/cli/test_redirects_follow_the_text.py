"""Redirects follow the text: an id whose exact text is still exported redirects to the id holding it now,
across a rename of its PDF and a change of which copy of it is exported, as across edits (the sample's FAQ)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pocket_assets.cli.main import main
from pocket_assets.export.redirects import resolve_redirect
from pocket_assets_tests.pdf_factory import SAMPLE_RAW


def _build(raw: Path, out: Path) -> None:
    assert main(["build", "--raw-dir", str(raw), "--output-dir", str(out)]) == 0


def _chunks(out: Path) -> list[dict[str, Any]]:
    return json.loads((out / "chunks_mode_b_fr.json").read_text(encoding="utf-8"))["chunks"]


def _holders(chunks: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(chunk type, text hash) -> the lowest id holding that text now."""
    holders: dict[tuple[str, str], str] = {}
    for chunk in sorted(chunks, key=lambda chunk: chunk["id"]):
        holders.setdefault((chunk["chunk_type"], chunk["hash"]), chunk["id"])
    return holders


def test_old_ids_follow_their_text_across_a_rename_and_a_change_of_exported_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    raw, out = tmp_path / "raw", tmp_path / "out"
    (raw / "fr").mkdir(parents=True)
    shutil.copyfile(SAMPLE_RAW / "fr" / "faq.pdf", raw / "fr" / "faq.pdf")
    _build(raw, out)
    first = _chunks(out)

    (raw / "fr" / "faq.pdf").rename(raw / "fr" / "faq-2024.pdf")
    _build(raw, out)
    renamed = _chunks(out)
    # A copy whose name sorts first is now the one exported: the texts move to its ids.
    shutil.copyfile(raw / "fr" / "faq-2024.pdf", raw / "fr" / "00-faq.pdf")
    _build(raw, out)
    copied = _chunks(out)
    assert {chunk["source"] for chunk in copied} == {"00-faq.pdf"}

    document = json.loads((out / "id_redirects_fr.json").read_text(encoding="utf-8"))
    holders = _holders(copied)
    for chunks in (first, renamed):
        followed = [chunk for chunk in chunks if (chunk["chunk_type"], chunk["hash"]) in holders]
        assert len(followed) > len(chunks) // 2, "most of the FAQ's texts are the same under the new name"
        for chunk in followed:
            assert resolve_redirect(document, chunk["id"], chunk["hash"]) == holders[(chunk["chunk_type"], chunk["hash"])]
            assert document["redirects"][chunk["id"]] is not None, chunk["id"]
