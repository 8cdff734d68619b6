"""`python -m pocket_assets.cli`: the console script without its launcher."""

from pocket_assets.cli.main import run

run()
