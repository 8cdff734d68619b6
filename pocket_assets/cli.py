"""`pocket-assets`: build the corpus from the command line into the instance the UI reads.

pocket-assets build [--pdf PATH ...] [--select ASSET ...]   register PDFs as partitions, build them
pocket-assets build --stale                                  rebuild only the stale PDFs (one run after a chunker bump)
pocket-assets stale                                          list the stale PDFs and why
pocket-assets ui [-p 3001 ...]                               register the PDFs as partitions, open the Dagster UI (same instance)
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn, Sequence

DEFAULT_DAGSTER_HOME = ".dagster_home"
# Runs this process and the `dagster dev` it starts create plan one materialization per asset, not one
# per PDF and asset (~12 ms each, before the run starts); `defs/planned_events.py` says what the UI shows.
SUBSET_PLANNED_EVENTS = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"
# A step's materializations of its PDFs are handed to the event storage together, up to this many at a time;
# `defs/event_store.py` stores them in one transaction per database (Dagster's own storage, one by one).
EVENT_BATCH_SIZE = "DAGSTER_EVENT_BATCH_SIZE"


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
    ui = commands.add_parser(
        "ui",
        help="register the PDFs as partitions, then start `dagster dev` on the same Dagster instance as `build`",
        epilog="Further arguments go to `dagster dev`, e.g. `pocket-assets ui -p 3001` (another port).",
    )
    ui.add_argument("--raw-dir", help="PDF folder (default data/raw or $POCKET_ASSETS_RAW_DIR)")
    ui.add_argument("--output-dir", help="output folder (default data/processed or $POCKET_ASSETS_OUTPUT_DIR)")
    args, dagster_args = parser.parse_known_args(argv)
    if dagster_args and args.command != "ui":
        parser.error(f"unrecognized arguments: {' '.join(dagster_args)}")
    _ensure_dagster_home()
    if args.command == "ui":
        start_ui(args.raw_dir, args.output_dir, dagster_args)
    if args.command == "stale" or args.stale:
        from pocket_assets.defs.cli_stale import build_stale, list_stale  # Dagster imports only when needed

        if args.command == "stale":
            return list_stale(raw_dir=args.raw_dir, output_dir=args.output_dir)
        if args.pdf:
            parser.error("--stale picks the PDFs itself; do not combine it with --pdf")
        return build_stale(select=args.select, raw_dir=args.raw_dir, output_dir=args.output_dir)
    preload_for_build(args.select, len(args.pdf) or _pdfs_under(args.raw_dir))
    from pocket_assets.defs.cli_build import run_build

    return run_build(pdfs=args.pdf, select=args.select, raw_dir=args.raw_dir, output_dir=args.output_dir)


# The assets a build validates for: selecting either runs the gates (the rest of the selection is what they need).
_VALIDATING_ASSETS = ("validated_chunks", "android_export")


def preload_for_build(select: Sequence[str], pdf_count: int) -> None:
    """For a build that validates: Great Expectations starts loading in its own process (~3 s of CPU,
    `core.quality.expectations_process`) while this one imports Dagster, extracts and chunks, when the
    build is short (`starts_early`: a long one starts it when it validates); and the
    tokenizer is loaded now, while this process is small: parsing the vendored one peaks ~170 MiB above
    the heap it starts from (~95 MiB of it kept), so ~190 MiB here, more once Dagster is loaded.
    A tokenizer that fails to load here is left to the chunking step, which reports it as it always has."""
    if select and not any(name in _VALIDATING_ASSETS for name in select):
        return
    from pocket_assets.core.quality.expectations_process import expectations_dir_from, prestart, starts_early
    from pocket_assets.core.tokenizer import DEFAULT_TOKENIZER, TOKENIZER_ENV, load_tokenizer

    if starts_early(pdf_count):
        prestart(expectations_dir_from(os.environ, Path.cwd()))
    try:
        load_tokenizer(os.environ.get(TOKENIZER_ENV, DEFAULT_TOKENIZER))  # cached: the step gets this one
    except Exception:  # noqa: BLE001 - the step loads it again and fails there, with the run's own report
        pass


def _pdfs_under(raw_dir: str | None) -> int:
    """How many PDFs a build of the whole raw folder names (refused ones too: an estimate, before Dagster loads)."""
    from pocket_assets.core.raw_folder import count_pdf_files, raw_dir_from

    return count_pdf_files(Path(raw_dir) if raw_dir else raw_dir_from(os.environ, Path.cwd()))


def start_ui(raw_dir: str | None, output_dir: str | None, dagster_args: Sequence[str]) -> NoReturn:
    """`dagster dev` on this instance, with the folder's PDFs registered first: the UI then offers
    them as partitions at once, before any build or sensor tick. The folders reach the code location
    `dagster dev` loads through the environment variables its resources read."""
    from pocket_assets.core.raw_folder import OUTPUT_DIR_ENV, RAW_DIR_ENV
    from pocket_assets.defs.cli_build import register_partitions  # Dagster imports only when needed

    register_partitions(raw_dir, output_dir)
    environment = dict(os.environ)
    for name, folder in ((RAW_DIR_ENV, raw_dir), (OUTPUT_DIR_ENV, output_dir)):
        if folder:
            environment[name] = str(Path(folder).resolve())
    dagster = Path(sys.executable).with_name("dagster")  # the venv's, even when it is not activated
    os.execve(dagster, [str(dagster), "dev", "-w", "workspace.yaml", *dagster_args], environment)


def _ensure_dagster_home() -> None:
    """Persistent local instance by default, so the UI shows the runs the command made; and the
    instance's settings that are environment variables (SUBSET_PLANNED_EVENTS, EVENT_BATCH_SIZE)."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(DEFAULT_DAGSTER_HOME).resolve())))
    home.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault(SUBSET_PLANNED_EVENTS, "1")  # set to 0 beforehand to keep one event per partition
    os.environ.setdefault(EVENT_BATCH_SIZE, "1000")  # 0: one by one
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n", encoding="utf-8")


def run() -> None:
    """The console script: `main`, then an exit that skips tearing the interpreter down.

    By the time `main` returns, every output is written and renamed (atomic writes), the instance
    is closed by its context and the worker pools are joined; what is left is freeing Dagster's,
    pyarrow's and the tokenizer's objects one by one (~0.7 s of a ~6 s one-PDF build), which the
    operating system does at once. `main` itself returns normally, for callers in a process of theirs.
    """
    code = main()
    expectations = sys.modules.get("pocket_assets.core.quality.expectations_process")
    if expectations is not None:
        expectations.close_all()  # skipped by os._exit otherwise; waiting keeps its CPU in our rusage
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    run()
