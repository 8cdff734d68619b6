"""`pocket-assets`: build the corpus from the command line into the Dagster instance the UI reads.

pocket-assets build [--pdf PATH ...] [--all] [--select ASSET ...]  build what is missing, changed, failed or stale
pocket-assets stale                                                list the PDFs a build would build, and why
pocket-assets ui [-p 3001 ...]                                     add the folder's PDFs as partitions, open the UI
pocket-assets forget PDF ... | --missing                           delete partitions and their stage files, named
pocket-assets prune --older-than DAYS                              delete old runs and their events
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from pocket_assets.core.errors import system_fix

DEFAULT_DAGSTER_HOME = ".dagster_home"
# What `--select` may name: the per-PDF stages and the export.
SELECTABLE = ("raw_pdf", "pages", "parents", "children", "table_summaries", "validated_chunks", "android_export")


def main(argv: Sequence[str] | None = None) -> int:
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # each line as it is printed, also into a pipe or a log file
    parser = argparse.ArgumentParser(prog="pocket-assets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser(
        "build", help="build the PDFs that are missing, changed, failed or stale, then the export (--all: every PDF)"
    )
    build.add_argument("--pdf", action="append", default=[], help="only this PDF (path or partition key); repeatable")
    build.add_argument("--all", action="store_true", help="every PDF of the folder, up to date or not")
    build.add_argument(
        "--select", action="append", default=[], choices=SELECTABLE, metavar="ASSET",
        help=f"only these assets, one of {', '.join(SELECTABLE)}; repeatable (the stages before are read back)",
    )  # fmt: skip
    stale = commands.add_parser("stale", help="list the PDFs a build would build (missing, changed, failed or stale)")
    ui = commands.add_parser(
        "ui",
        help="add the folder's PDFs as partitions, then start `dagster dev` on the same Dagster instance as `build`",
        epilog="Further arguments go to `dagster dev`, e.g. `pocket-assets ui -p 3001` (another port).",
    )
    forget = commands.add_parser("forget", help="delete these partitions and their stage files from the instance")
    forget.add_argument("pdfs", nargs="*", help="partition keys such as fr/x.pdf")
    forget.add_argument("--missing", action="store_true", help="every partition whose file is not in the raw folder")
    prune = commands.add_parser("prune", help="delete runs older than some days, and their events, from the instance")
    prune.add_argument("--older-than", type=float, required=True, metavar="DAYS", help="age of the runs to delete")
    for command in (build, stale, ui, forget, prune):
        command.add_argument("--raw-dir", help="PDF folder (default data/raw or $POCKET_ASSETS_RAW_DIR)")
        command.add_argument("--output-dir", help="output folder (default data/processed or $POCKET_ASSETS_OUTPUT_DIR)")
    args, dagster_args = parser.parse_known_args(argv)
    if dagster_args and args.command != "ui":
        parser.error(f"unrecognized arguments: {' '.join(dagster_args)}")
    if args.command == "build" and args.pdf and args.all:
        parser.error("--pdf names the PDFs to build; --all builds every PDF: give one or the other")
    if args.command == "forget" and not args.pdfs and not args.missing:
        parser.error("forget what? name partition keys (fr/x.pdf) or give --missing")
    try:
        return _run(args, dagster_args)
    except OSError as error:
        fix = system_fix(error)
        if fix is None:
            raise
        print(f"{args.command} stopped: {fix}")
        return 1


def _run(args: argparse.Namespace, dagster_args: Sequence[str]) -> int:
    ensure_dagster_home()
    from pocket_assets.cli import build, forget, prune, stale, ui  # Dagster is imported once the arguments are good

    if args.command == "ui":
        ui.start_ui(args.raw_dir, args.output_dir, dagster_args)
    if args.command == "stale":
        return stale.list_stale(args.raw_dir, args.output_dir)
    if args.command == "forget":
        return forget.forget(args.pdfs, args.missing, args.raw_dir, args.output_dir)
    if args.command == "prune":
        return prune.prune(args.older_than, args.raw_dir, args.output_dir)
    return build.run_build(args.pdf, args.select, args.all, args.raw_dir, args.output_dir)


def ensure_dagster_home() -> Path:
    """The Dagster instance: `$DAGSTER_HOME`, else `.dagster_home/` in the current folder, created with
    telemetry off; so the UI started here shows the runs the command made."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(DEFAULT_DAGSTER_HOME).resolve())))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    return home


def run() -> None:
    """The console script."""
    sys.exit(main())
