"""`pocket-assets`: build the corpus from the command line into the instance the UI reads.

pocket-assets build [--pdf PATH ...] [--select ASSET ...]   register PDFs as partitions, build them
pocket-assets build --stale                                  rebuild only the stale PDFs (one run after a chunker bump)
pocket-assets stale                                          list the stale PDFs and why
pocket-assets ui                                             open the Dagster UI on the same instance
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

DEFAULT_DAGSTER_HOME = ".dagster_home"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pocket-assets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="register every PDF as a partition and build it in one run")
    build.add_argument("--pdf", action="append", default=[], help="only this PDF (path or partition key); repeatable")
    build.add_argument("--select", action="append", default=[], help="only these assets (and what they need)")
    build.add_argument("--raw-dir", help="PDF folder (default data/raw or $POCKET_ASSETS_RAW_DIR)")
    build.add_argument("--output-dir", help="output folder (default data/processed or $POCKET_ASSETS_OUTPUT_DIR)")
    build.add_argument("--stale", action="store_true", help="only the PDFs that are missing or stale (see `stale`)")
    stale = commands.add_parser("stale", help="list the PDFs whose outputs are missing or stale, with the reason")
    stale.add_argument("--raw-dir", help="PDF folder (default data/raw or $POCKET_ASSETS_RAW_DIR)")
    stale.add_argument("--output-dir", help="output folder (default data/processed or $POCKET_ASSETS_OUTPUT_DIR)")
    commands.add_parser("ui", help="start `dagster dev` on the same Dagster instance as `build`")
    args = parser.parse_args(argv)
    _ensure_dagster_home()
    if args.command == "ui":
        dagster = Path(sys.executable).with_name("dagster")  # the venv's, even when it is not activated
        os.execv(dagster, [str(dagster), "dev", "-w", "workspace.yaml"])
    if args.command == "stale" or args.stale:
        from pocket_assets.defs.cli_stale import build_stale, list_stale  # Dagster imports only when needed

        if args.command == "stale":
            return list_stale(raw_dir=args.raw_dir, output_dir=args.output_dir)
        if args.pdf:
            parser.error("--stale picks the PDFs itself; do not combine it with --pdf")
        return build_stale(select=args.select, raw_dir=args.raw_dir, output_dir=args.output_dir)
    preload_for_build(args.select)
    from pocket_assets.defs.cli_build import run_build

    return run_build(pdfs=args.pdf, select=args.select, raw_dir=args.raw_dir, output_dir=args.output_dir)


# The assets a build validates for: selecting either runs the gates (the rest of the selection is what they need).
_VALIDATING_ASSETS = ("validated_chunks", "android_export")


def preload_for_build(select: Sequence[str]) -> None:
    """For a build that validates: Great Expectations starts loading in its own process (~4 s of CPU,
    `core.quality.expectations_process`) while this one imports Dagster, extracts and chunks; and the
    tokenizer is loaded now, while this process is small: parsing it peaks ~300 MiB above the heap it
    starts from (freed after), so it peaks at ~430 MiB here and ~670 MiB once Dagster is loaded.
    A tokenizer that fails to load here is left to the chunking step, which reports it as it always has."""
    if select and not any(name in _VALIDATING_ASSETS for name in select):
        return
    from pocket_assets.core.quality.expectations_process import expectations_dir_from, prestart
    from pocket_assets.core.tokenizer import DEFAULT_TOKENIZER, TOKENIZER_ENV, load_tokenizer

    prestart(expectations_dir_from(os.environ, Path.cwd()))
    try:
        load_tokenizer(os.environ.get(TOKENIZER_ENV, DEFAULT_TOKENIZER))  # cached: the step gets this one
    except Exception:  # noqa: BLE001 - the step loads it again and fails there, with the run's own report
        pass


def _ensure_dagster_home() -> None:
    """Persistent local instance by default, so the UI shows the runs the command made."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(DEFAULT_DAGSTER_HOME).resolve())))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
