"""The command line (`pocket-assets`): build, stale, forget, prune, ui; one module per command.

It drives the Dagster definitions (`defs`) on the instance of `DAGSTER_HOME`; the definitions never
import it, so a code server or a run loads no command-line code.
"""
