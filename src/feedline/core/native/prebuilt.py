"""Libraries compiled before installation: the ``_prebuilt`` folder of a binary wheel.

A wheel built by ``tools/build_wheels.py`` carries the compiled C kernels in
``feedline/_prebuilt/`` beside a ``manifest.json``::

    {"format": 1,
     "libraries": {"feedline_cpu": {
         "digest": "<sha256 of the sources and headers>",
         "variants": [{"file": "feedline_cpu-x86-64-v3.so", "target": "x86-64-v3",
                       "requires": ["avx2", "bmi2", "fma", ...]},
                      {"file": "feedline_cpu-x86-64.so", "target": "x86-64", "requires": []}]}}}

:func:`find_prebuilt` picks the first variant whose required CPU features this CPU has (the
manifest lists the fastest first, the portable baseline last), and only when the digest matches
the sources installed beside it: a stale library is never opened in place of the code it was
built from. A source checkout has no ``_prebuilt`` folder; its libraries compile on first use.

Environment:
    ``FEEDLINE_PREBUILT=0``: ignore prebuilt libraries (compile on first use as a source install
    does, e.g. to build with ``-march=native``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MANIFEST",
    "PREBUILT_DIR",
    "Prebuilt",
    "cpu_features",
    "find_prebuilt",
    "prebuilt_enabled",
    "source_digest",
]

#: Where a binary wheel keeps its compiled libraries (the package's ``_prebuilt`` folder).
PREBUILT_DIR = Path(__file__).resolve().parents[2] / "_prebuilt"
#: The manifest's file name inside :data:`PREBUILT_DIR`.
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Prebuilt:
    """A prebuilt library chosen for this CPU.

    Attributes:
        path: the ``.so`` file.
        target: the ``-march`` it was compiled for (e.g. ``x86-64-v3``).
    """

    path: Path
    target: str


def prebuilt_enabled() -> bool:
    """False when ``FEEDLINE_PREBUILT`` is ``0``/``false``/``no``/``off``."""
    value = os.environ.get("FEEDLINE_PREBUILT", "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def source_digest(files: Sequence[Path]) -> str:
    """The sha256 (hex) of the files' contents, in order: what a prebuilt library was built from."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@functools.cache
def cpu_features() -> frozenset[str]:
    """This CPU's feature flags as Linux lists them (``flags`` on x86, ``Features`` on Arm);
    empty where ``/proc/cpuinfo`` cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def _manifest(folder: Path) -> dict:
    try:
        loaded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) and loaded.get("format") == 1 else {}


def find_prebuilt(name: str, digest: str, folder: Path | None = None) -> Prebuilt | None:
    """The prebuilt ``name`` this CPU runs from ``folder`` (default :data:`PREBUILT_DIR`), or
    None (no manifest, no entry, a digest other than ``digest``, no variant whose features this
    CPU has, or ``FEEDLINE_PREBUILT=0``)."""
    if not prebuilt_enabled():
        return None
    folder = PREBUILT_DIR if folder is None else folder
    entry = _manifest(folder).get("libraries", {}).get(name)
    if not isinstance(entry, dict) or entry.get("digest") != digest:
        return None
    features = cpu_features()
    for variant in entry.get("variants", []):
        path = folder / variant["file"]
        if set(variant.get("requires", ())) <= features and path.is_file():
            return Prebuilt(path, variant.get("target", ""))
    return None
