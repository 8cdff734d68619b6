"""One Dagster instance, several folders: a build adds its folder's PDFs and removes nobody's;
old runs can be pruned without losing any PDF's state."""

import re
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, job, op

from pocket_assets.cli.main import main
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, text_pdf


def _folder(root: Path, names: list[str]) -> Path:
    for name in names:
        text_pdf(root / name, [(ARTICLE_FR if name.startswith("fr/") else ARTICLE_EN) * 2])
    return root


def test_two_folders_against_one_instance_keep_each_others_partitions_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "shared_home"))
    first = _folder(tmp_path / "team_a", ["fr/a1.pdf", "fr/a2.pdf", "intl/a3.pdf"])
    second = _folder(tmp_path / "team_b", ["fr/b1.pdf"])
    for raw, out in ((first, tmp_path / "out_a"), (second, tmp_path / "out_b")):
        assert main(["build", "--raw-dir", str(raw), "--output-dir", str(out)]) == 0
    with pytest.raises(SystemExit):  # `ui` adds too, and removes nothing
        monkeypatch.setattr("os.execve", lambda *_: (_ for _ in ()).throw(SystemExit(0)))
        main(["ui", "--raw-dir", str(second)])
    capsys.readouterr()
    with DagsterInstance.get() as instance:
        keys = instance.get_dynamic_partitions(pdf_partitions.name)
        assert sorted(keys) == ["fr/a1.pdf", "fr/a2.pdf", "fr/b1.pdf", "intl/a3.pdf"]
        assert instance.get_materialized_partitions(AssetKey("validated_chunks")) == set(keys)
    assert (tmp_path / "out_a" / "stages" / "validated_chunks" / "fr" / "a1.pdf.parquet").is_file()


@op
def _prints() -> None:
    print("a line a run printed")


@job
def _printing_job() -> None:
    _prints()


def test_prune_deletes_old_runs_but_keeps_those_holding_a_pdfs_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    raw, out = _folder(tmp_path / "raw", ["fr/a.pdf", "fr/b.pdf"]), tmp_path / "out"
    args = ["--raw-dir", str(raw), "--output-dir", str(out)]
    assert main(["build", *args]) == 0
    assert main(["build", "--pdf", "fr/a.pdf", *args]) == 0  # a.pdf's state now lives in the second build's runs
    home = tmp_path / "home"
    with DagsterInstance.get() as instance:
        logged = _printing_job.execute_in_process(instance=instance).run_id  # as the UI's runs: its output captured
        before = {record.dagster_run.run_id for record in instance.get_run_records()}
    assert len(before) == 5, "two builds, each a run of the PDFs and an export, and the run printing"
    assert list((home / "storage" / logged).rglob("*.out")), "its captured output"
    capsys.readouterr()
    assert main(["prune", "--older-than", "0", *args]) == 0
    printed = capsys.readouterr().out
    assert "2 run(s) older than 0 day(s) deleted" in printed
    freed = re.search(r"deleted, ([\d,]+) KiB freed in ", printed)
    assert freed and int(freed[1].replace(",", "")) > 0, printed
    with DagsterInstance.get() as instance:
        after = {record.dagster_run.run_id for record in instance.get_run_records()}
        assert after < before and len(after) == 3, "the first export run and the printing one held no PDF's state"
        for asset in ("raw_pdf", "validated_chunks"):
            assert instance.get_materialized_partitions(AssetKey(asset)) == {"fr/a.pdf", "fr/b.pdf"}, asset
    assert logged in before - after
    for gone in before - after:
        assert not list(home.rglob(f"{gone}*")), "nothing of a deleted run is left (its event database, its logs)"
    for kept in after:
        assert (home / "history" / "runs" / f"{kept}.db").is_file(), "the kept runs keep theirs"
