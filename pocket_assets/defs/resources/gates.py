"""The gates: the Great Expectations suites and the chunk JSON Schema, and the folder they are read from."""

from __future__ import annotations

import os
from pathlib import Path

import blake3
from dagster import ConfigurableResource, InitResourceContext
from pydantic import Field, PrivateAttr

from pocket_assets.core.json_schema import Validator
from pocket_assets.core.quality.suites import PACKAGED_EXPECTATIONS, Gates, load_gates
from pocket_assets.stages.registry import Setting

EXPECTATIONS_DIR_ENV = "POCKET_ASSETS_EXPECTATIONS_DIR"


class GatesResource(ConfigurableResource):
    """The gates: the Great Expectations suites and the chunk JSON Schema, loaded once per process."""

    expectations_dir: str = Field(
        default="",
        description=f"Folder of the suites and schemas (chunks.partition.json, chunks.corpus.json, chunk.schema.json, "
        f"hepilot_chunk_output.schema.json); empty: those shipped with the package. Env {EXPECTATIONS_DIR_ENV}.",
    )
    _gates: Gates | None = PrivateAttr(default=None)

    @property
    def expectations_path(self) -> Path:
        return Path(self.expectations_dir) if self.expectations_dir else PACKAGED_EXPECTATIONS

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._gates = load_gates(self.expectations_path)

    def gates(self) -> Gates:
        return self._gates if self._gates is not None else load_gates(self.expectations_path)

    def chunk_schema(self) -> Validator:
        return self.gates().chunk_schema

    def setting(self) -> Setting:
        """What versions the verdicts: the content of every suite and schema file (a stricter suite re-judges)."""
        files = sorted(path for path in self.expectations_path.glob("*.json"))
        digest = blake3.blake3(b"".join(path.name.encode() + b"\0" + path.read_bytes() for path in files)).hexdigest()
        return Setting("gates", {"files": digest[:16]})


def default_gates() -> GatesResource:
    return GatesResource(expectations_dir=os.environ.get(EXPECTATIONS_DIR_ENV, ""))
