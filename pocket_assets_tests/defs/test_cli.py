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
    captured = capsys.readouterr()
    printed = captured.out
    assert "raw_pdf [1/1] fr/zz-broken.pdf" in captured.err, "progress in the run log"
    assert "ERROR" in captured.err and "Traceback (most recent call last)" in captured.err, "the traceback is shown"
    assert "removed partition intl/rules.pdf" in printed
    assert "fr/zz-broken.pdf: FAILED (raw_pdf last failed: zz-broken.pdf: not a PDF" in printed


def test_a_tokenizer_that_does_not_load_fails_in_the_run_not_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI loads the tokenizer early (memory); a broken one must still be reported by the chunking step."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    broken = tmp_path / "broken-tokenizer.json"
    broken.write_text('{"not": "a tokenizer"}', encoding="utf-8")
    monkeypatch.setenv("POCKET_ASSETS_TOKENIZER", str(broken))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    assert main(["build", "--raw-dir", str(raw), "--output-dir", str(out)]) == 1
    captured = capsys.readouterr()
    assert "FAILED for fr/reglement.pdf .. intl/rules.pdf" in captured.out, "the run was made, and failed"
    assert "broken-tokenizer.json: not a Hugging Face tokenizer.json" in captured.err, "the step says why"
