"""What keeps a build's processes the size of what they hold (core.memory)."""

import os
import subprocess
import sys



def test_arrow_allocates_from_malloc_here_and_in_child_processes_unless_told_otherwise() -> None:
    """Stage files (and the Great Expectations process's frames) use glibc's allocator, whose freed
    pages the build returns; a pool named in the environment is left alone."""
    script = "import pocket_assets, os, pyarrow; print(pyarrow.default_memory_pool().backend_name, os.environ['ARROW_DEFAULT_MEMORY_POOL'])"
    late = "import pyarrow, pocket_assets; print(pyarrow.default_memory_pool().backend_name)"
    environment = {key: value for key, value in os.environ.items() if key != "ARROW_DEFAULT_MEMORY_POOL"}

    def run(code: str, **extra: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], env={**environment, **extra}, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert run(script) == "system system", "children started from here inherit the setting"
    assert run(late) == "system", "a pyarrow imported first is told directly"
    assert run(script, ARROW_DEFAULT_MEMORY_POOL="mimalloc") == "mimalloc mimalloc"
