"""A full or read-only output folder: the build's summary names the cause in one sentence, as the user's to fix, and
never calls it a bug or says the others are exported.

Root ignores permissions (`chmod` cannot make a folder read-only for the tests, which run as root here), so the
disk is made real: the build runs in a mount namespace of its own (`unshare`, as root or through a user
namespace) where its output folder is a tiny tmpfs that fills up (ENOSPC), or a read-only bind mount (EROFS).
Nothing outside the namespace sees those mounts; they end with the build. Without `unshare` or the right to
mount, the tests skip.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from pocket_assets_tests.cli.commands import Command, command_env
from pocket_assets_tests.pdf_factory import small_corpus

NAMESPACES = (("unshare", "--mount", "--propagation", "private"), ("unshare", "--user", "--map-root-user", "--mount"))
FULL_TMPFS = 'mount -t tmpfs -o size=64k tmpfs "$1"'  # a dozen stage files fill it
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"'


def _namespace(probe: Path) -> Sequence[str]:
    """The `unshare` command that lets the build mount here, or skip."""
    probe.mkdir(exist_ok=True)
    for namespace in NAMESPACES if shutil.which("unshare") else ():
        tried = subprocess.run([*namespace, "sh", "-c", FULL_TMPFS, "sh", str(probe)], capture_output=True, check=False)
        if tried.returncode == 0:
            return namespace
    pytest.skip("cannot mount in a namespace of our own here (no unshare, or no right to mount)")


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    """A raw folder of two small PDFs and an empty output folder."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    out.mkdir()
    return raw, out


def _build_with(mount: str, folder: Path, args: Sequence[str], tmp_path: Path) -> Command:
    """`pocket-assets build ARGS` in a mount namespace where `mount` was done on `folder` first."""
    namespace = _namespace(tmp_path / "probe")
    env = command_env(tmp_path / "home")
    prefix = [*namespace, "sh", "-c", f'{mount} && shift && exec "$@"', "sh", str(folder)]
    return Command.start(["build", *args], env, tmp_path, prefix)


def _assert_named_as_the_users_to_fix(output: str, cause: str, advice: str) -> None:
    assert cause in output and advice in output, output
    assert "bug" not in output, "an error of the disk is not a bug"
    assert "DagsterExecutionStepExecutionError" not in output and "Traceback" not in output, output
    if "export failed" in output:
        assert "the others are exported" not in output


def test_a_full_output_disk_fails_the_pdfs_and_the_export_naming_the_full_disk(tmp_path: Path) -> None:
    raw, out = _folders(tmp_path)
    build = _build_with(FULL_TMPFS, out, ["--raw-dir", str(raw), "--output-dir", str(out)], tmp_path)
    assert build.finish() == 1
    _assert_named_as_the_users_to_fix(build.output, "No space left on device", "the disk is full: free space on it")
    assert "2 PDFs, 2 failed" in build.output or "failed as a whole" in build.output


def test_a_read_only_output_folder_stops_the_build_at_once_in_one_sentence(tmp_path: Path) -> None:
    raw, out = _folders(tmp_path)
    build = _build_with(READ_ONLY, out, ["--raw-dir", str(raw), "--output-dir", str(out)], tmp_path)
    assert build.finish() == 1
    assert build.lines == [
        f"build stopped: Read-only file system ({out}/.pocket-assets-command.lock): the file system is read-only: "
        "make it writable, or choose another output folder (--output-dir)"
    ]


def test_read_only_stage_files_fail_the_build_naming_the_read_only_disk(tmp_path: Path) -> None:
    """Stage files on a read-only disk beside a writable output folder: every stage the build writes fails."""
    raw, out = _folders(tmp_path)
    args = ["--raw-dir", str(raw), "--output-dir", str(out)]
    first = Command.start(["build", *args], command_env(tmp_path / "home"), tmp_path)
    assert first.finish() == 0, first.output
    build = _build_with(READ_ONLY, out / "stages", ["--all", *args], tmp_path)
    assert build.finish() == 1
    _assert_named_as_the_users_to_fix(build.output, "Read-only file system", "the file system is read-only: make it writable")
    assert "2 PDFs, 2 failed" in build.output
