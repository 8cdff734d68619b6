"""The layers: `core` is a plain library, `stages` reads it, `export` reads both, `defs` is the Dagster layer over
them and `cli` drives `defs`. Each is checked in a fresh interpreter by what importing it loads."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _loaded_after(code: str, prefixes: tuple[str, ...]) -> list[str]:
    """The modules starting with one of `prefixes` that running `code` in a fresh interpreter leaves loaded."""
    probe = f"{code}\nimport sys\nprint('\\n'.join(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    return result.stdout.split()


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("pocket_assets.core", ("dagster", "pocket_assets.stages", "pocket_assets.export", "pocket_assets.defs", "pocket_assets.cli")),
        ("pocket_assets.stages", ("dagster", "pocket_assets.export", "pocket_assets.defs", "pocket_assets.cli")),
        ("pocket_assets.export", ("dagster", "pocket_assets.defs", "pocket_assets.cli")),
    ],
)
def test_a_library_imports_no_dagster_and_no_layer_above_it(package: str, forbidden: tuple[str, ...]) -> None:
    every_module = (
        f"import pkgutil, importlib, {package} as package\n"
        f"for module in pkgutil.walk_packages(package.__path__, '{package}.'):\n"
        "    importlib.import_module(module.name)"
    )
    assert _loaded_after(every_module, forbidden) == []


def test_the_dagster_definitions_load_no_command_line_code() -> None:
    """A code server or a run loads the definitions (the defs folder): none of it is the command line's."""
    load = (
        "from pathlib import Path\n"
        "from dagster import load_from_defs_folder\n"
        "import pocket_assets.definitions as location\n"
        "load_from_defs_folder(path_within_project=Path(location.__file__).parent)"
    )
    assert _loaded_after(load, ("pocket_assets.cli",)) == []


def test_every_package_is_shipped() -> None:
    """pyproject lists the packages (the top-level `expectations/` ships as one): a package missing from the list
    would be missing from a wheel."""
    listed = set(tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    on_disk = {".".join(init.parent.relative_to(REPO_ROOT).parts) for init in (REPO_ROOT / "pocket_assets").rglob("__init__.py")}
    assert listed == on_disk | {"pocket_assets.expectations"}


def test_core_public_api_resolves() -> None:
    import pocket_assets.core as core

    for name in core.__all__:
        assert getattr(core, name) is not None, name
