import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pocket_assets.core.quality.deferred_imports import defer_imports

PACKAGE = "pocket_assets_deferred_probe"


@pytest.fixture
def probe_package(tmp_path: Path) -> Iterator[Path]:
    """A package whose modules record, in a file, when their code runs."""
    runs = tmp_path / "runs.txt"
    package = tmp_path / PACKAGE
    package.mkdir()
    record = f"open({str(runs)!r}, 'a').write(__name__ + '\\n')\n"
    (package / "__init__.py").write_text(record + "ANSWER = 42\n", encoding="utf-8")
    (package / "stats.py").write_text(record + "def entropy():\n    return 'same module'\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield runs
    sys.path.remove(str(tmp_path))
    for name in [name for name in sys.modules if name.partition(".")[0] == PACKAGE]:
        del sys.modules[name]


def _ran(runs: Path) -> list[str]:
    return runs.read_text(encoding="utf-8").split() if runs.exists() else []


def test_a_deferred_module_imports_at_once_and_runs_its_code_on_first_use(probe_package: Path) -> None:
    finder = defer_imports((PACKAGE,))
    try:
        from pocket_assets_deferred_probe import stats  # type: ignore[import-not-found]

        # Finding the submodule reads the package's __path__, which runs the package (scipy's is small).
        assert _ran(probe_package) == [PACKAGE], "the submodule's code has not run"
        assert stats.entropy() == "same module"
        assert _ran(probe_package) == [PACKAGE, f"{PACKAGE}.stats"]
        assert sys.modules[PACKAGE].ANSWER == 42 and sys.modules[f"{PACKAGE}.stats"] is stats
    finally:
        sys.meta_path.remove(finder)


def test_other_packages_import_as_usual(probe_package: Path) -> None:
    finder = defer_imports(("some_other_package",))
    try:
        import pocket_assets_deferred_probe  # type: ignore[import-not-found]  # noqa: F401

        assert _ran(probe_package) == [PACKAGE]
    finally:
        sys.meta_path.remove(finder)
