"""`pocket-assets build` end to end: partitions synced, one run, a summary, the exit code."""

import os
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.cli import main, preload_for_build
from pocket_assets.core.quality import expectations_process
from pocket_assets.core.quality.expectations_process import EARLY_START_MAX_PDFS
from pocket_assets.defs.cli_build import cli_paths
from pocket_assets.defs.partition_ranges import KEY_SHOWN_MAX, PDFS_TAG, range_run_tags
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets_tests.pdf_factory import random_bytes_pdf, small_corpus, text_pdf


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
        [run] = [record.dagster_run for record in instance.get_run_records()]
        assert run.tags[PDFS_TAG] == "2 PDFs: fr/reglement.pdf .. intl/rules.pdf", "all PDFs in one run, named"

    random_bytes_pdf(raw / "fr" / "zz-broken.pdf")
    (raw / "intl" / "rules.pdf").unlink()
    assert main([*args, "--pdf", str(raw / "fr" / "zz-broken.pdf")]) == 1
    captured = capsys.readouterr()
    printed = captured.out
    assert "raw_pdf [1/1] fr/zz-broken.pdf" in captured.err, "progress in the run log"
    assert "ERROR" in captured.err and "Traceback (most recent call last)" in captured.err, "the traceback is shown"
    assert "removed partition intl/rules.pdf" in printed
    assert "fr/zz-broken.pdf: FAILED (raw_pdf last failed: zz-broken.pdf: not a PDF" in printed
    with DagsterInstance.from_ref(DagsterInstance.get().get_ref()) as instance:
        assert instance.get_run_records(limit=1)[0].dagster_run.tags[PDFS_TAG] == "fr/zz-broken.pdf"


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
    assert "FAILED for 2 PDFs, fr/reglement.pdf .. intl/rules.pdf" in captured.out, "the run was made, and failed"
    assert "broken-tokenizer.json: not a Hugging Face tokenizer.json" in captured.err, "the step says why"


@pytest.mark.parametrize(("pdf_count", "started"), [(1, True), (EARLY_START_MAX_PDFS, True), (EARLY_START_MAX_PDFS + 1, False)])
def test_great_expectations_starts_before_the_run_only_for_a_short_build(
    pdf_count: int, started: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long build starts GE when it validates: its ~200 MiB would otherwise sit beside extraction and chunking."""
    prestarted: list[Path] = []
    monkeypatch.setattr(expectations_process, "prestart", prestarted.append)
    preload_for_build([], pdf_count)
    assert bool(prestarted) is started


def test_console_script_exits_with_the_build_code_after_writing_everything(tmp_path: Path) -> None:
    """`run` (the console script and `python -m`) ends with os._exit: the summary, the exports and the
    exit code must all be out before it, and the expectations process must not outlive it."""
    import subprocess
    import sys

    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    random_bytes_pdf(raw / "fr" / "zz-broken.pdf")
    expectations = tmp_path / "expectations"  # a path of its own, to find this command's expectations process
    shutil.copytree(Path(__file__).resolve().parents[2] / "pocket_assets" / "expectations", expectations)
    environment = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"), "POCKET_ASSETS_EXPECTATIONS_DIR": str(expectations)}
    (tmp_path / "home").mkdir()
    command = [sys.executable, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(out)]
    finished = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)

    assert finished.returncode == 1, finished.stderr[-2000:]
    assert "3 PDFs, 1 failed" in finished.stdout and "fr/zz-broken.pdf" in finished.stdout
    lines = (out / "chunks_fr.txt").read_text(encoding="utf-8").splitlines()
    assert lines and all(line.startswith("<chunk_splitter> ") for line in lines)
    assert not list(out.rglob("*.tmp*")), "no temporary file left behind"
    leftover = subprocess.run(["pgrep", "-f", f"expectations_process {expectations}"], capture_output=True, check=False)
    assert leftover.returncode == 1, "no expectations process outlives the command"


def test_ui_command_registers_the_pdfs_then_starts_dagster_dev_with_the_folders_and_its_own_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The UI offers the folder's PDFs as partitions before any build; `dagster dev` gets the folders
    through the environment its code location reads, and the arguments `pocket-assets` does not know."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    raw = tmp_path / "raw"
    small_corpus(raw)
    started: list[tuple[str, list[str], dict[str, str]]] = []

    def execve(path: str, argv: list[str], environment: dict[str, str]) -> None:
        started.append((str(path), argv, environment))
        raise SystemExit(0)  # os.execve never returns

    monkeypatch.setattr(os, "execve", execve)
    with pytest.raises(SystemExit):
        main(["ui", "--raw-dir", str(raw), "--output-dir", str(tmp_path / "out"), "-p", "3001"])

    [(path, argv, environment)] = started
    assert Path(path).name == "dagster" and argv[1:] == ["dev", "-w", "workspace.yaml", "-p", "3001"]
    assert environment["POCKET_ASSETS_RAW_DIR"] == str(raw.resolve())
    assert environment["POCKET_ASSETS_OUTPUT_DIR"] == str((tmp_path / "out").resolve())
    assert environment["DAGSTER_HOME"] == str(tmp_path / "dagster_home")
    assert "2 PDF(s) of" in capsys.readouterr().out
    with DagsterInstance.from_ref(DagsterInstance.get().get_ref()) as instance:
        assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/reglement.pdf", "intl/rules.pdf"]
        assert not instance.get_run_records(), "registered, not built"


def test_arguments_other_commands_do_not_know_are_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["stale", "-p", "3001"])
    assert exit_info.value.code == 2 and "unrecognized arguments: -p 3001" in capsys.readouterr().err


def test_a_run_names_long_pdf_keys_elided_keeping_the_corpus_and_the_file_name() -> None:
    long_key = "fr/" + "rapport annuel " * 6 + "2025.pdf"
    shown = range_run_tags(["fr/a.pdf", long_key])[PDFS_TAG]
    assert shown.startswith("2 PDFs: fr/a.pdf .. fr/rapport annuel") and shown.endswith("annuel 2025.pdf")
    assert len(shown.split(" .. ")[1]) == KEY_SHOWN_MAX and "…" in shown


def test_the_commands_know_the_corpora_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Like the code location: a `de` PDF the sensor registered must not be removed (stages and all) by `ui` or `build`."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("POCKET_ASSETS_CORPORA", "fr,intl,de")
    monkeypatch.setenv("POCKET_ASSETS_EXPORT_STRICT", "1")
    raw = tmp_path / "raw"
    small_corpus(raw)
    text_pdf(raw / "de" / "regeln.pdf", ["Erste Regel."])
    paths = cli_paths(str(raw), None)
    assert paths.corpus_names == ("fr", "intl", "de") and paths.export_strict
    monkeypatch.setattr(os, "execve", lambda *_: (_ for _ in ()).throw(SystemExit(0)))
    with pytest.raises(SystemExit):
        main(["ui", "--raw-dir", str(raw)])
    with DagsterInstance.from_ref(DagsterInstance.get().get_ref()) as instance:
        assert "de/regeln.pdf" in instance.get_dynamic_partitions(pdf_partitions.name)
