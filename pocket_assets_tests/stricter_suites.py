"""A stricter copy of the project's expectation suites, under which one named PDF fails its gate.

Passed through `POCKET_ASSETS_EXPECTATIONS_DIR` (or `CorpusPaths.expectations_dir`),
it lets a test build the sample corpus with exactly one PDF failing, whatever the
chunker makes of the documents: `source_is_pdf` refuses that file name.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pocket_assets_tests.pdf_factory import REPO_ROOT


def suites_refusing(file_name: str, target: Path) -> Path:
    shutil.copytree(REPO_ROOT / "expectations", target)
    suite_path = target / "chunks.partition.json"
    suite = json.loads(suite_path.read_text(encoding="utf-8"))
    expectation = next(e for e in suite["expectations"] if e["meta"]["name"] == "source_is_pdf")
    expectation["kwargs"]["regex"] = rf"^(?!{re.escape(file_name)}$).*\.pdf$"
    suite_path.write_text(json.dumps(suite), encoding="utf-8")
    return target
