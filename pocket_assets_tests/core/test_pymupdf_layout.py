import json
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

_SETTINGS = """
import json, sys
{before}
import pymupdf
tools = pymupdf.TOOLS
print(json.dumps({{
    "settings": [tools.unset_quad_corrections(), tools.mupdf_display_errors(), tools.mupdf_display_warnings()],
    "helpers_loaded": "pymupdf4llm" in sys.modules,
    "layout_loaded": sys.modules.get("pymupdf.layout") is not None,
}}))
"""


def _import_pymupdf(before: str) -> dict:
    """PyMuPDF imported in a fresh interpreter (this one has imported it already), after `before`."""
    done = subprocess.run(
        [sys.executable, "-c", _SETTINGS.format(before=before)], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_pymupdf_through_core_skips_its_helpers_and_layout_model_with_the_same_settings() -> None:
    plain = _import_pymupdf("")
    ours = _import_pymupdf("import pocket_assets.core")
    assert plain["helpers_loaded"] and plain["layout_loaded"], "PyMuPDF 2.0 loads both by itself"
    assert not ours["helpers_loaded"] and not ours["layout_loaded"]
    assert ours["settings"] == plain["settings"], "extraction runs with the settings the helpers' import makes"


def test_a_caller_may_still_import_the_helpers_itself() -> None:
    after = _import_pymupdf("import pocket_assets.core, pymupdf\nimport pymupdf4llm")
    assert after["helpers_loaded"]
