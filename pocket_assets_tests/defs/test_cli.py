"""`pocket-assets build` end to end: partitions synced, one run, a summary, the exit code."""

from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.cli import main
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets_tests.pdf_factory import random_bytes_pdf, small_corpus


def test_build_command_builds_reports_and_fails_on_a_broken_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    args = ["build", "--raw-dir", str(raw), "--output-dir", str(out)]

    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "2 PDFs, 0 failed" in printed and "chunks_mode_b_fr.json" in printed
    with DagsterInstance.from_ref(DagsterInstance.get().get_ref()) as instance:
        assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/reglement.pdf", "intl/rules.pdf"]
        assert len(instance.get_run_records()) == 1, "all PDFs in one run"

    random_bytes_pdf(raw / "fr" / "zz-broken.pdf")
    (raw / "intl" / "rules.pdf").unlink()
    assert main([*args, "--pdf", str(raw / "fr" / "zz-broken.pdf")]) == 1
    printed = capsys.readouterr().out
    assert "removed partition intl/rules.pdf" in printed
    assert "fr/zz-broken.pdf: FAILED (raw_pdf last failed: zz-broken.pdf: not a PDF" in printed
