"""The allocator setting that keeps freed per-sample blocks for reuse (glibc only)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

GLIBC = platform.libc_ver()[0] == "glibc"

# Allocates two 1 MiB blocks and frees them, 50 times (two temporaries of an image, as an OpenCV
# call makes); prints the page faults and the setting's state.
PROBE = """
import json, resource, numpy as np
from feedline.core.host_memory import keep_freed_memory
tuned = keep_freed_memory()
again = keep_freed_memory()
def temporaries():
    first = np.ones(1 << 20, np.uint8)
    second = np.ones(1 << 20, np.uint8)
    del first, second
temporaries()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    temporaries()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"tuned": tuned, "again": again, "faults": faults}))
"""


def probe(**variables: str) -> dict[str, object]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MALLOC_") and k != "FEEDLINE_KEEP_FREED_MEMORY"
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**env, **variables},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason="the setting exists only with glibc's malloc")
def test_freed_blocks_are_reused_without_page_faults() -> None:
    tuned = probe()
    untuned = probe(FEEDLINE_KEEP_FREED_MEMORY="0")
    assert tuned["tuned"] is True and tuned["again"] is True
    assert untuned["tuned"] is False
    # 100 fresh megabytes fault in 25600 pages; reused ones in almost none.
    assert tuned["faults"] < 2000 < untuned["faults"]  # type: ignore[operator]


@pytest.mark.skipif(not GLIBC, reason="the setting exists only with glibc's malloc")
def test_the_users_own_malloc_variables_win() -> None:
    assert probe(MALLOC_TRIM_THRESHOLD_="131072")["tuned"] is False
