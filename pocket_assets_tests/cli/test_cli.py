"""`pocket-assets` end to end: partitions added, what needs building built in range runs, the export once,
a summary that tells the truth, and the exit code."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.cli.main import main
from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.jobs import BUILD_CORPUS, EXPORT_CORPUS
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.ranges import KEY_SHOWN_MAX, PDFS_TAG, run_tags
from pocket_assets_tests.pdf_factory import random_bytes_pdf, small_corpus, text_pdf


def _runs(job_name: str) -> list:
    with DagsterInstance.get() as instance:
        return [record.dagster_run for record in instance.get_run_records() if record.dagster_run.job_name == job_name]


def test_build_builds_what_needs_it_exports_once_and_fails_on_a_broken_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    args = ["build", "--raw-dir", str(raw), "--output-dir", str(out)]

    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "2 PDFs, 0 failed" in printed and "chunks_mode_b_fr.json" in printed
    [run] = _runs(BUILD_CORPUS)
    assert run.tags[PDFS_TAG] == "2 PDFs: fr/reglement.pdf .. intl/rules.pdf", "both PDFs in one range run, named"
    assert len(_runs(EXPORT_CORPUS)) == 1

    assert main(args) == 0, "nothing changed: nothing to build"
    printed = capsys.readouterr().out
    assert "building 0 PDF(s)" in printed and "2 PDF(s) up to date, not built again" in printed
    assert len(_runs(BUILD_CORPUS)) == 1 and len(_runs(EXPORT_CORPUS)) == 1, "no run, no export: it is up to date"

    random_bytes_pdf(raw / "fr" / "zz-broken.pdf")
    (raw / "intl" / "rules.pdf").unlink()
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "fr/zz-broken.pdf: FAILED (raw_pdf failed: zz-broken.pdf: not a PDF" in captured.out
    assert "building 1 PDF(s)" in captured.out, "only the new PDF is built"
    assert "Traceback" not in captured.out + captured.err, "an expected PDF error is one sentence, no traceback"
    with DagsterInstance.get() as instance:
        assert "intl/rules.pdf" in instance.get_dynamic_partitions(pdf_partitions.name), "a build never removes partitions"
    assert (out / "stages" / "pages" / "intl" / "rules.pdf.parquet").is_file(), "nor stage files"

    assert main([*args, "--all"]) == 1, "zz-broken.pdf still fails"
    assert "building 2 PDF(s)" in capsys.readouterr().out, "--all: every PDF of the folder, up to date or not"


def test_a_step_that_fails_as_a_whole_is_named_with_its_reason_and_no_pdf_is_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tokenizer that does not load fails the step before any PDF: the summary says which step and why."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    broken = tmp_path / "broken-tokenizer.json"
    broken.write_text('{"not": "a tokenizer"}', encoding="utf-8")
    monkeypatch.setenv("POCKET_ASSETS_TOKENIZER", str(broken))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    assert main(["build", "--raw-dir", str(raw), "--output-dir", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "FAILED for 2 PDFs, fr/reglement.pdf .. intl/rules.pdf" in printed, "the run was made, and failed"
    assert "failed as a whole" in printed and "not a Hugging Face tokenizer.json" in printed
    assert "2 PDFs, 2 failed" in printed and "0 failed" not in printed
    assert "fr/reglement.pdf: FAILED (raw_pdf not built: " in printed


def test_wrong_arguments_get_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    with pytest.raises(SystemExit) as exit_info:
        main(["build", "--select", "bogus"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "invalid choice: 'bogus'" in error and "validated_chunks" in error
    assert "Traceback" not in error
    with pytest.raises(SystemExit) as exit_info:
        main(["stale", "-p", "3001"])
    assert exit_info.value.code == 2 and "unrecognized arguments: -p 3001" in capsys.readouterr().err
    assert main(["build", "--raw-dir", str(tmp_path), "--output-dir", "/"]) == 2
    assert "output folder / is refused" in capsys.readouterr().out
    assert main(["build", "--raw-dir", str(tmp_path / "raw"), "--output-dir", str(tmp_path)]) == 2
    assert "holds the raw folder" in capsys.readouterr().out


def test_the_console_script_exits_with_the_build_code_and_leaves_no_temp_file(tmp_path: Path) -> None:
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    random_bytes_pdf(raw / "fr" / "zz-broken.pdf")
    environment = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(out)]
    finished = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)

    assert finished.returncode == 1, finished.stderr[-2000:]
    assert "3 PDFs, 1 failed" in finished.stdout and "fr/zz-broken.pdf" in finished.stdout
    lines = (out / "chunks_fr.txt").read_text(encoding="utf-8").splitlines()
    assert lines and all(line.startswith("<chunk_splitter> ") for line in lines)
    assert not list(out.rglob("*.tmp*")), "no temporary file left behind"


def test_ui_adds_the_pdfs_then_starts_dagster_dev_with_the_folders_and_its_own_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The UI offers the folder's PDFs as partitions before any build; `dagster dev` gets the folders through the
    environment its code location reads, and the arguments `pocket-assets` does not know."""
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
    assert Path(path).name == "dagster" and argv[1] == "dev" and argv[-2:] == ["-p", "3001"]
    assert argv[2] == "-w" and Path(argv[3]).name == "workspace.yaml" and Path(argv[3]).is_absolute()
    assert environment["POCKET_ASSETS_RAW_DIR"] == str(raw.resolve())
    assert environment["POCKET_ASSETS_OUTPUT_DIR"] == str((tmp_path / "out").resolve())
    assert "2 PDF(s) of" in capsys.readouterr().out
    with DagsterInstance.get() as instance:
        assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/reglement.pdf", "intl/rules.pdf"]
        assert not instance.get_run_records(), "added, not built"


def test_forget_deletes_only_what_it_names_and_refuses_a_key_leaving_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    text_pdf(raw / "fr" / "autre.pdf", ["Une autre règle du jeu, assez longue pour faire un morceau."])
    text_pdf(raw / "fr" / "zzz.pdf", ["Une dernière règle du jeu, assez longue pour faire un morceau."])
    assert main(["build", "--raw-dir", str(raw), "--output-dir", str(out), "--select", "raw_pdf"]) == 0
    (raw / "fr" / "autre.pdf").unlink()
    (raw / "fr" / "zzz.pdf").unlink()
    outside = tmp_path / "x.pdf"
    outside.write_bytes(b"not to be touched")
    climbing = "fr/../../x.pdf"  # added by hand: it names a file outside both folders, sorted before the others
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(pdf_partitions.name, [climbing])
    assert main(["forget", "fr/nothing.pdf", "--raw-dir", str(raw), "--output-dir", str(out)]) == 1
    assert "fr/nothing.pdf: not a partition of this instance; nothing deleted" in capsys.readouterr().out

    assert main(["forget", "--missing", "--raw-dir", str(raw), "--output-dir", str(out)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    [refusal] = [line for line in captured.out.splitlines() if climbing in line]
    assert refusal.startswith(f"{climbing}: refused: this partition key leaves its folder") and "nothing deleted" in refusal
    assert "removed partition fr/autre.pdf and its stage files" in captured.out
    assert "removed partition fr/zzz.pdf and its stage files" in captured.out
    assert "2 partition(s) deleted" in captured.out
    with DagsterInstance.get() as instance:
        assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/reglement.pdf", "intl/rules.pdf", climbing]
    assert not list((out / "stages").rglob("autre.pdf*")) and not list((out / "stages").rglob("zzz.pdf*"))
    assert (out / "stages" / "raw_pdf" / "fr" / "reglement.pdf.parquet").exists()
    assert outside.read_bytes() == b"not to be touched"


def test_a_run_names_long_pdf_keys_elided_keeping_the_corpus_and_the_file_name() -> None:
    long_key = "fr/" + "rapport annuel " * 6 + "2025.pdf"
    shown = run_tags(["fr/a.pdf", long_key])[PDFS_TAG]
    assert shown.startswith("2 PDFs: fr/a.pdf .. fr/rapport annuel") and shown.endswith("annuel 2025.pdf")
    assert len(shown.split(" .. ")[1]) == KEY_SHOWN_MAX and "…" in shown


def test_the_commands_know_the_corpora_of_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("POCKET_ASSETS_CORPORA", "fr,intl,de")
    monkeypatch.setenv("POCKET_ASSETS_EXPORT_STRICT", "1")
    raw = tmp_path / "raw"
    small_corpus(raw)
    text_pdf(raw / "de" / "regeln.pdf", ["Erste Regel."])
    paths = cli_paths(str(raw), str(tmp_path / "out"))
    assert paths.corpus_names == ("fr", "intl", "de") and paths.export_strict
    assert "de/regeln.pdf" in paths.scan().keys
