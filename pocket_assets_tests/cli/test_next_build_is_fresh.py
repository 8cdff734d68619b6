"""The next build equals a fresh build: after any change to the raw folder, the output folder or the settings,
`pocket-assets build` exports what a fresh full build of the same folder (another output folder, another
instance) exports.

"Equal" compares every export file a phone or a tool reads (`docs/chunks.md`, "The next build is a fresh
build"): the same export files; the SDK and HEPilot files byte for byte; the corpus JSON byte for byte but
for `metadata.generated`; and the redirect file resolving every exported (id, hash) to that same id (its
history of earlier exports and its counts are what a fresh build cannot know). Each case starts from a copy
of one built folder, makes its change, builds, and is compared with a fresh build of the folder it left;
fresh builds of the same folder and settings are made once. Small generated PDFs keep it to a couple of
minutes.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pocket_assets.cli.main import main
from pocket_assets.export.redirects import resolve_redirect
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, text_pdf

EXPORT_PREFIXES = ("chunks_", "id_redirects_")
_GENERATED = re.compile(rb'"generated": "[^"]*"')


@dataclass(frozen=True)
class Folders:
    raw: Path
    out: Path
    home: Path

    def build(self, env: Mapping[str, str] = {}) -> tuple[int, str]:
        """`pocket-assets build` of these folders with these settings; its exit code and what it printed (its runs'
        log included)."""
        printed = io.StringIO()
        with (
            pytest.MonkeyPatch.context() as patch,
            contextlib.redirect_stdout(printed),
            contextlib.redirect_stderr(printed),
        ):
            patch.setenv("DAGSTER_HOME", str(self.home))
            for name, value in env.items():
                patch.setenv(name, value)
            code = main(["build", "--raw-dir", str(self.raw), "--output-dir", str(self.out)])
        return code, printed.getvalue()


@dataclass(frozen=True)
class Step:
    """A change, then a build with these settings (the environment's own for the others), which exits `code` and
    says `told`."""

    change: Callable[[Folders], None]
    env: Mapping[str, str] = field(default_factory=dict)
    code: int = 0
    told: str = ""


def _base_folder(raw: Path) -> None:
    text_pdf(raw / "fr" / "a.pdf", ["Questions fréquentes sur les tournois. " + ARTICLE_FR * 3])
    text_pdf(raw / "fr" / "b.pdf", ["Cadences rapides et parties éclair. " + ARTICLE_FR * 2])
    text_pdf(raw / "intl" / "c.pdf", ["Laws of chess for online play. " + ARTICLE_EN * 3])


def _replace_by_link(path: Path, target: str) -> None:
    path.unlink()
    path.symlink_to(target)


def _swap(folder: Path, first: str, second: str) -> None:
    (folder / first).rename(folder / "swap.tmp")
    (folder / second).rename(folder / first)
    (folder / "swap.tmp").rename(folder / second)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip_a_byte(path: Path) -> None:
    """An edit that keeps the file's size (and puts its modification time back)."""
    data = bytearray(path.read_bytes())
    at = data.index(b"Laws")
    data[at] = ord("l")
    times = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def _piece(folders: Folders, key: str) -> Path:
    return folders.out / "stages" / "export_pieces" / f"{key}.piece"


def _validated(folders: Folders, key: str) -> Path:
    return PartitionStore(folders.out / "stages").data_path(VALIDATED_CHUNKS, key)


BEHIND = "the export is behind: "
KEEP = {"POCKET_ASSETS_KEEP_DUPLICATES": "1"}
FR_ONLY = {"POCKET_ASSETS_CORPORA": "fr"}

# Cases that leave the same folder share its fresh build: copies and links of b.pdf are all `0-b.pdf`, and a.pdf
# renamed, copied or left as its copy is `z-a.pdf`.
CASES: dict[str, list[Step]] = {
    # The raw folder.
    "pdf-edited": [Step(lambda f: text_pdf(f.raw / "fr" / "a.pdf", ["Questions révisées. " + ARTICLE_FR * 4]))],
    "pdf-renamed": [Step(lambda f: (f.raw / "fr" / "a.pdf").rename(f.raw / "fr" / "z-a.pdf"))],
    "copy-sorting-first": [Step(lambda f: shutil.copyfile(f.raw / "fr" / "b.pdf", f.raw / "fr" / "0-b.pdf"))],
    "copy-sorting-last": [Step(lambda f: shutil.copyfile(f.raw / "fr" / "a.pdf", f.raw / "fr" / "z-a.pdf"))],
    "symbolic-link": [Step(lambda f: (f.raw / "fr" / "0-b.pdf").symlink_to("b.pdf"))],
    "hard-link": [Step(lambda f: os.link(f.raw / "fr" / "b.pdf", f.raw / "fr" / "0-b.pdf"))],
    "pdf-deleted": [Step(lambda f: (f.raw / "fr" / "b.pdf").unlink())],
    "replaced-by-a-copy-of-another": [Step(lambda f: shutil.copyfile(f.raw / "fr" / "b.pdf", f.raw / "fr" / "a.pdf"))],
    "replaced-by-a-link-to-another": [Step(lambda f: _replace_by_link(f.raw / "fr" / "a.pdf", "b.pdf"))],
    "copied-into-the-other-corpus": [Step(lambda f: shutil.copyfile(f.raw / "intl" / "c.pdf", f.raw / "fr" / "c.pdf"))],
    "two-pdfs-swap-names": [Step(lambda f: _swap(f.raw / "fr", "a.pdf", "b.pdf"))],
    "original-of-a-copy-deleted": [
        Step(lambda f: shutil.copyfile(f.raw / "fr" / "a.pdf", f.raw / "fr" / "z-a.pdf")),
        Step(lambda f: (f.raw / "fr" / "a.pdf").unlink()),
    ],
    "name-no-key-can-hold": [
        Step(lambda f: shutil.copyfile(f.raw / "fr" / "b.pdf", f.raw / "fr" / "new\nline.pdf"), code=1)
    ],
    # The output folder.
    "sdk-file-deleted": [Step(lambda f: (f.out / "chunks_fr.txt").unlink(), told=BEHIND + "chunks_fr.txt is missing")],
    "corpus-json-truncated": [
        Step(lambda f: _truncate(f.out / "chunks_mode_b_fr.json"), told=BEHIND + "chunks_mode_b_fr.json is ")
    ],
    "hepilot-file-edited-same-size": [
        Step(
            lambda f: _flip_a_byte(f.out / "chunks_intl.hepilot.jsonl"),
            told=BEHIND + "chunks_intl.hepilot.jsonl is not the bytes that were published",
        )
    ],
    "redirect-file-deleted": [
        Step(lambda f: (f.out / "id_redirects_intl.json").unlink(), told=BEHIND + "id_redirects_intl.json is missing")
    ],
    "export-record-deleted": [Step(lambda f: (f.out / "export_state.json").unlink(), told=BEHIND + "no export recorded")],
    "piece-damaged": [Step(lambda f: _truncate(_piece(f, "fr/a.pdf")))],
    "validated-stage-file-damaged": [Step(lambda f: _truncate(_validated(f, "fr/b.pdf")))],
    # The settings, turned on and back off.
    "keep-duplicates-then-not": [
        Step(lambda f: shutil.copyfile(f.raw / "fr" / "a.pdf", f.raw / "fr" / "z-a.pdf"), KEEP),
        Step(lambda f: None, told="fr/z-a.pdf is a copy of fr/a.pdf"),
    ],
    "one-corpus-fewer": [
        Step(
            lambda f: None,
            FR_ONLY,
            told="removed chunks_intl.hepilot.jsonl, chunks_intl.txt, chunks_mode_b_intl.json, id_redirects_intl.json: "
            "the exports of a corpus no longer configured",
        )
    ],
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Folders:
    root = tmp_path_factory.mktemp("base")
    folders = Folders(root / "raw", root / "out", root / "home")
    _base_folder(folders.raw)
    code, printed = folders.build()
    assert code == 0, printed
    return folders


class FreshBuilds:
    """A fresh full build of a folder (a new output folder and instance) per folder content and settings."""

    def __init__(self, root: Path, base: Folders) -> None:
        self._root = root
        self._built: dict[str, Path] = {_content_key(base.raw, {}): base.out}

    def of(self, raw: Path, env: Mapping[str, str]) -> Path:
        key = _content_key(raw, env)
        if key not in self._built:
            fresh = Folders(raw, self._root / key / "out", self._root / key / "home")
            fresh.build(env)
            self._built[key] = fresh.out
        return self._built[key]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, base: Folders) -> Iterator[FreshBuilds]:
    yield FreshBuilds(tmp_path_factory.mktemp("fresh"), base)


@pytest.mark.parametrize("case", list(CASES))
def test_the_next_build_exports_what_a_fresh_build_exports(
    case: str, base: Folders, fresh: FreshBuilds, tmp_path: Path
) -> None:
    folders = Folders(tmp_path / "raw", tmp_path / "out", tmp_path / "home")
    for source, target in ((base.raw, folders.raw), (base.out, folders.out), (base.home, folders.home)):
        shutil.copytree(source, target, symlinks=True)
    for step in CASES[case]:
        step.change(folders)
        code, printed = folders.build(step.env)
        assert code == step.code and step.told in printed, printed
    assert_same_exports(folders.out, fresh.of(folders.raw, CASES[case][-1].env))


def assert_same_exports(out: Path, fresh: Path) -> None:
    """`out`'s exports are those of the fresh build `fresh` (the module docstring says what is compared)."""
    names = _export_files(fresh)
    assert _export_files(out) == names
    for name in names:
        data, expected = (out / name).read_bytes(), (fresh / name).read_bytes()
        if name.startswith("id_redirects_"):
            history = json.loads(data)
            chunks = json.loads((fresh / name.replace("id_redirects_", "chunks_mode_b_")).read_bytes())["chunks"]
            moved = [chunk["id"] for chunk in chunks if resolve_redirect(history, chunk["id"], chunk["hash"]) != chunk["id"]]
            assert not moved, f"{name}: exported ids that do not resolve to themselves: {moved[:5]}"
        elif name.startswith("chunks_mode_b_"):
            assert _GENERATED.sub(b"", data, count=1) == _GENERATED.sub(b"", expected, count=1), name
        else:
            assert data == expected, name


def _export_files(out: Path) -> list[str]:
    return sorted(path.name for path in out.iterdir() if path.name.startswith(EXPORT_PREFIXES))


def _content_key(raw: Path, env: Mapping[str, str]) -> str:
    """The folder as a build reads it (each file's name and bytes, links followed) and the settings."""
    digest = hashlib.sha256(json.dumps(sorted(env.items())).encode())
    for path in sorted(raw.rglob("*")):
        if path.is_file():
            digest.update(os.fsencode(path.relative_to(raw)) + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
