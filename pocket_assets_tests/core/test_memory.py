"""What keeps a build's processes the size of what they hold (core.memory)."""

import os
import subprocess
import sys

POOL = "import pyarrow, os; print(pyarrow.default_memory_pool().backend_name, os.environ['ARROW_DEFAULT_MEMORY_POOL'])"


def test_arrow_allocates_from_malloc_here_and_in_child_processes_unless_told_otherwise() -> None:
    """Stage files (and the Great Expectations process's frames) use glibc's allocator, whose freed
    pages the build returns; a pool named in the environment is left alone."""
    environment = {key: value for key, value in os.environ.items() if key != "ARROW_DEFAULT_MEMORY_POOL"}

    def run(code: str, **extra: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], env={**environment, **extra}, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert run("import pocket_assets; " + POOL) == "system system", "processes started from here inherit it"
    assert run("import pyarrow, pocket_assets; " + POOL) == "system system", "a pyarrow imported first is told too"
    assert run("import pocket_assets; " + POOL, ARROW_DEFAULT_MEMORY_POOL="mimalloc") == "mimalloc mimalloc"
