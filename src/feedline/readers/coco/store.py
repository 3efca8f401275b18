"""Preprocessed COCO annotations on disk, and the automatic annotation cache.

``preprocessed_annotations`` reads DALI's layout (:mod:`~feedline.readers.coco.dali_files`,
what ``save_preprocessed_annotations`` writes) or this module's, which earlier feedline
versions wrote there and the cache still uses (:func:`load_preprocessed` tells them apart).

This module's directory holds one ``.npy`` file per array of
:class:`~feedline.readers.coco.index.CocoIndex` (loaded with ``allow_pickle=False``, large
ones memory-mapped), the file names as one NUL-separated UTF-8 ``uint8`` array, and a JSON
manifest written last (so a half-written
directory is never taken for a complete one). Values are final: they already include the options
recorded in the manifest.

The cache stores the same directories under ``<cache_dir>/coco-<key>``, the key hashing the
annotation file's absolute path, size and modification time and every parsing option; a new
entry is written to a temporary directory and renamed into place, so concurrent readers never
see a partial entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from typing import Any

import numpy as np

from feedline.readers.coco.index import ARRAY_FIELDS, CocoIndex, CocoOptions

__all__ = [
    "CACHE_ENV",
    "MANIFEST",
    "cache_entry",
    "load_index",
    "load_preprocessed",
    "resolve_cache_dir",
    "save_index",
    "store_in_cache",
]

MANIFEST = "feedline_coco.json"
CACHE_ENV = "FEEDLINE_CACHE_DIR"
_FORMAT = "feedline-coco-annotations"
_VERSION = 1
_MMAP_BYTES = 1 << 20
_NAMES = "file_names"


def resolve_cache_dir(argument: str | None) -> str | None:
    """The cache directory: the argument, else ``$FEEDLINE_CACHE_DIR``; ``""`` turns it off."""
    if argument is None:
        argument = os.environ.get(CACHE_ENV) or None
    return argument or None


def save_index(index: CocoIndex, directory: str, source: dict[str, Any] | None = None) -> None:
    """Write ``index`` to ``directory`` (created if needed; existing files are replaced).

    Raises:
        OSError: the directory cannot be written (the message names it).
    """
    try:
        os.makedirs(directory, exist_ok=True)
        names = "\0".join(index.file_names).encode("utf-8", "surrogatepass")
        arrays = {_NAMES: np.frombuffer(names, np.uint8)}
        for name in ARRAY_FIELDS:
            value = getattr(index, name)
            if value is not None:
                arrays[name] = np.ascontiguousarray(value)
        for name, value in arrays.items():
            _atomic_write(os.path.join(directory, f"{name}.npy"), lambda f, v=value: np.save(f, v))
        manifest = {
            "format": _FORMAT,
            "version": _VERSION,
            "num_samples": len(index),
            "options": index.options.to_json(),
            "arrays": sorted(arrays),
            "source": source or {},
        }
        text = json.dumps(manifest, indent=1).encode()
        _atomic_write(os.path.join(directory, MANIFEST), lambda f: f.write(text))
    except OSError as exc:
        raise OSError(
            exc.errno, f"cannot write preprocessed annotations to {directory!r}: {exc}"
        ) from None


def _atomic_write(path: str, write: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def load_index(directory: str) -> CocoIndex:
    """Read what :func:`save_index` wrote.

    Raises:
        FileNotFoundError: ``directory`` or its manifest does not exist.
        ValueError: the directory holds something else (DALI's ``.dat`` files, another
            version) or a damaged array (the message names the file).
    """
    manifest_path = os.path.join(directory, MANIFEST)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"preprocessed annotations directory {directory!r} not found")
    if not os.path.exists(manifest_path):
        raise FileNotFoundError(f"no {MANIFEST} in {directory!r}")
    try:
        with open(manifest_path, "rb") as f:
            manifest = json.load(f)
        if manifest.get("format") != _FORMAT or manifest.get("version") != _VERSION:
            raise ValueError("unknown format or version")
        options = CocoOptions.from_json(manifest["options"])
        arrays = {name: _load_array(directory, name) for name in manifest["arrays"]}
        names = arrays.pop(_NAMES).tobytes().decode("utf-8", "surrogatepass")
        file_names = names.split("\0") if manifest["num_samples"] else []
        if len(file_names) != manifest["num_samples"]:
            raise ValueError("file_names.npy does not match num_samples")
        index = CocoIndex(file_names=file_names, options=options, **arrays)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"damaged preprocessed annotations in {directory!r}: {exc}") from None
    _check_consistent(index, directory)
    return index


def load_preprocessed(directory: str) -> tuple[CocoIndex, bool]:
    """The annotations in ``directory`` (DALI's layout or :func:`save_index`'s), and whether
    they hold the images' COCO ids (DALI's only with ``image_ids``; otherwise sample ``i`` has
    id ``i``, as in DALI).

    Raises:
        FileNotFoundError: ``directory`` does not exist or holds neither layout.
        ValueError: damaged files (the message names the directory or the file).
    """
    from feedline.readers.coco.dali_files import DALI_MARKER, load_dali

    if os.path.exists(os.path.join(directory, MANIFEST)):
        return load_index(directory), True
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"preprocessed annotations directory {directory!r} not found")
    if not all(os.path.exists(os.path.join(directory, f)) for f in (DALI_MARKER, "filenames.dat")):
        raise FileNotFoundError(
            f"{directory!r} holds no preprocessed annotations (neither DALI's offsets.dat and "
            f"filenames.dat nor feedline's {MANIFEST})"
        )
    try:
        index = load_dali(directory)
    except ValueError as exc:
        raise ValueError(f"damaged preprocessed annotations: {exc}") from None
    return index, os.path.exists(os.path.join(directory, "original_ids.dat"))


def _load_array(directory: str, name: str) -> np.ndarray:
    if name != _NAMES and name not in ARRAY_FIELDS:
        raise ValueError(f"unexpected array {name!r}")
    path = os.path.join(directory, f"{name}.npy")
    mmap = "r" if os.path.getsize(path) > _MMAP_BYTES else None
    try:
        return np.load(path, mmap_mode=mmap, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def _check_consistent(index: CocoIndex, directory: str) -> None:
    n = len(index)
    m = int(index.ann_off[-1]) if index.ann_off.size else -1
    problems = [
        index.ann_off.shape != (n + 1,),
        index.bboxes.shape != (m, 4),
        index.labels.shape != (m,),
        any(getattr(index, a).shape != (n,) for a in ("image_ids", "widths", "heights")),
    ]
    if index.ann_poly_off is not None:
        problems.append(index.ann_poly_off.shape != (m + 1,))
    if any(problems):
        raise ValueError(f"damaged preprocessed annotations in {directory!r}: inconsistent sizes")


def _cache_key(path: str, options: CocoOptions) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    key = {
        "path": os.path.abspath(path),
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "options": options.to_json(),
        "version": _VERSION,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]


def cache_entry(cache_dir: str, path: str, options: CocoOptions) -> CocoIndex | None:
    """The cached index of annotation file ``path`` parsed with ``options``, if any."""
    key = _cache_key(path, options)
    entry = os.path.join(cache_dir, f"coco-{key}")
    if key is None or not os.path.exists(os.path.join(entry, MANIFEST)):
        return None
    try:
        return load_index(entry)
    except (OSError, ValueError):
        return None  # a damaged entry is ignored and rewritten


def store_in_cache(cache_dir: str, path: str, options: CocoOptions, index: CocoIndex) -> bool:
    """Store ``index`` as the cache entry of ``path``/``options``; False if it could not."""
    key = _cache_key(path, options)
    if key is None:
        return False
    entry = os.path.join(cache_dir, f"coco-{key}")
    tmp = None
    try:
        os.makedirs(cache_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-coco-", dir=cache_dir)
        save_index(index, tmp, source={"annotations_file": os.path.abspath(path)})
        if os.path.exists(entry):
            shutil.rmtree(entry, ignore_errors=True)
        os.rename(tmp, entry)
        return True
    except OSError as exc:
        warnings.warn(
            f"feedline: cannot write the COCO annotation cache in {cache_dir!r}: {exc}",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    finally:
        if tmp is not None and os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
