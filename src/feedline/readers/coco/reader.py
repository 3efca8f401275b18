"""The ``readers.coco`` operator: its schema, argument checks and kernel.

The package re-exports the hook, so ``feedline.readers.coco`` is the ``coco-reader`` plugin
(entry point group ``feedline.plugins``). Parsing is in
:mod:`~feedline.readers.coco.parse`, the DALI semantics in :mod:`~feedline.readers.coco.index`,
masks in :mod:`~feedline.readers.coco.masks` and the on-disk formats in
:mod:`~feedline.readers.coco.store`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec
from feedline.readers.base import Reader, reader_schema
from feedline.readers.coco.index import CocoIndex, CocoOptions, build_index
from feedline.readers.coco.store import (
    CACHE_ENV,
    cache_entry,
    load_preprocessed,
    resolve_cache_dir,
    store_in_cache,
)

if TYPE_CHECKING:
    from feedline.core.kernel import KernelContext
    from feedline.core.registry import Registry

__all__ = ["COCO_SCHEMA", "CocoReader", "feedline_register_operators"]

_DOC = """\
Read a COCO data set: encoded images with their boxes, labels and, optionally, masks.

Outputs, in order: ``images`` (the encoded file bytes, ``uint8`` ``(file_size,)``; decode them
with ``fn.decoders.image``), ``bboxes`` (``float32`` ``(M, 4)``), ``labels`` (``int32``
``(M,)``), then with ``polygon_masks`` ``polygons`` (``int32`` ``(P, 3)``: object index, first
vertex, end vertex) and ``vertices`` (``float32`` ``(V, 2)``), or with ``pixelwise_masks``
``pixelwise_masks`` (``int32`` ``(H, W, 1)``, layout ``HWC``, each pixel the label of the
object covering it, the highest label where objects overlap), then with ``image_ids``
``image_ids`` (``int32`` ``(1,)``, the COCO image id). Every output's ``source_info`` is the
image's ``file_name``.

Samples are the ``images`` of the JSON sorted by id (or the ``images`` argument's list, in its
order), each with its annotations in JSON order. An object is kept when its box is at least
``size_threshold`` wide and high and it is not a crowd object (unless ``include_iscrowd``).
Categories are numbered 1..K in the order of the JSON's ``categories`` (unknown ids → 0) unless
``avoid_class_remapping``.

Annotation files are parsed with msgspec and simdjson (no Python object per coordinate); with
``cache_dir`` (or the ``FEEDLINE_CACHE_DIR`` environment variable) the result is cached, keyed
by the file's path, size and modification time and by the parsing arguments, so a later build
skips parsing."""

COCO_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("file_root", "str", doc="Directory the images' file_name entries are relative to."),
    ArgSpec("annotations_file", "str", "", "Path of the COCO JSON file. Excludes "
            "preprocessed_annotations; one of the two is required."),
    ArgSpec("images", "str_vec", None, "Read only these file names, in this order; duplicates "
            "give repeated samples, names missing from the JSON are dropped."),
    ArgSpec("avoid_class_remapping", "bool", False, "Return the raw category_id as label "
            "instead of its 1-based position in the JSON's categories."),
    ArgSpec("ltrb", "bool", False, "Boxes as [left, top, right, bottom] instead of "
            "[x, y, width, height]."),
    ArgSpec("ratio", "bool", False, "Divide box and vertex coordinates by the image width and "
            "height (pixelwise masks stay in pixels)."),
    ArgSpec("size_threshold", "float", 0.1, "Drop objects whose box width or height is below "
            "this value (in pixels, before ltrb and ratio)."),
    ArgSpec("skip_empty", "bool", False, "Drop images that have no object left."),
    ArgSpec("include_iscrowd", "bool", True, "Keep objects marked iscrowd (or is_crowd)."),
    ArgSpec("polygon_masks", "bool", False, "Also output polygons and vertices. Excludes "
            "pixelwise_masks."),
    ArgSpec("masks", "bool", False, "Deprecated: like polygon_masks, but polygon rows count "
            "coordinates instead of vertices (start and end ×2)."),
    ArgSpec("pixelwise_masks", "bool", False, "Also output a label mask rasterised from the "
            "polygons and RLE segmentations (needs pycocotools). Excludes polygon_masks."),
    ArgSpec("image_ids", "bool", False, "Also output the COCO image id."),
    ArgSpec("preprocessed_annotations", "str", "", "Directory written by "
            "save_preprocessed_annotations (DALI's or feedline's), read instead of "
            "annotations_file (then "
            "annotations_file, images, ltrb, ratio, size_threshold and skip_empty must be left "
            "at their defaults: the saved values already include them)."),
    ArgSpec("save_preprocessed_annotations", "bool", False, "Write the parsed annotations to "
            "save_preprocessed_annotations_dir in DALI's binary layout (DALI reads them) when they "
            "are loaded."),
    ArgSpec("save_preprocessed_annotations_dir", "str", "", "Where "
            "save_preprocessed_annotations writes (created if needed)."),
    ArgSpec("cache_dir", "str", None, "feedline extension: cache parsed annotations in this "
            f"directory (default: ${CACHE_ENV}, unset = no cache; '' turns caching off)."),
)  # fmt: skip

_DEPRECATED = {
    "save_img_ids": "image_ids",
    "dump_meta_files": "save_preprocessed_annotations",
    "dump_meta_files_path": "save_preprocessed_annotations_dir",
    "meta_files_path": "preprocessed_annotations",
}
_PARSING_ARGS = {  # must stay at these defaults with preprocessed_annotations
    "annotations_file": "",
    "images": None,
    "ltrb": False,
    "ratio": False,
    "size_threshold": 0.1,
    "skip_empty": False,
}


def _outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    names = ["images", "bboxes", "labels"]
    if args.get("polygon_masks") or args.get("masks"):
        names += ["polygons", "vertices"]
    if args.get("pixelwise_masks"):
        names.append("pixelwise_masks")
    if args.get("image_ids"):
        names.append("image_ids")
    return tuple(names)


COCO_SCHEMA = reader_schema(
    "readers.coco", _DOC, COCO_ARGS, outputs=_outputs, deprecated=_DEPRECATED
)


def _check_args(args: Mapping[str, Any], name: str) -> None:
    def fail(message: str) -> None:
        raise ValueError(f"readers.coco {name!r}: {message}")

    if (args["polygon_masks"] or args["masks"]) and args["pixelwise_masks"]:
        fail("polygon_masks (or masks) and pixelwise_masks are mutually exclusive")
    if args["polygon_masks"] and args["masks"]:
        fail("masks is the deprecated form of polygon_masks; give only one")
    if args["preprocessed_annotations"]:
        for key, default in _PARSING_ARGS.items():
            if args[key] != default:
                fail(
                    f"{key} cannot be used with preprocessed_annotations (the saved "
                    "annotations already include it)"
                )
    elif not args["annotations_file"]:
        fail("give annotations_file or preprocessed_annotations")
    if args["save_preprocessed_annotations"] != bool(args["save_preprocessed_annotations_dir"]):
        fail("save_preprocessed_annotations and save_preprocessed_annotations_dir go together")
    if args["skip_cached_images"]:
        fail("skip_cached_images is not supported (DALI's COCO reader rejects it too)")


class CocoReader(Reader):
    """The ``readers.coco`` kernel; its items are sample positions in a :class:`CocoIndex`."""

    def __init__(self, ctx: KernelContext) -> None:
        super().__init__(ctx)
        self._coco: CocoIndex | None = None
        self._root = ""
        self._boxes = self._labels = np.zeros(0)
        self._offsets: list[int] = []

    def setup(self) -> None:
        """Check the arguments, then index unless ``lazy_init``."""
        _check_args(self.args, self.ctx.name)
        if self.args["masks"]:
            warnings.warn(
                "readers.coco: masks is deprecated; use polygon_masks (its polygon rows count "
                "vertices, not coordinates: [mask, 0, 3] instead of [mask, 0, 6])",
                DeprecationWarning,
                stacklevel=2,
            )
        super().setup()

    def output_layouts(self) -> tuple[str, ...]:
        """``HWC`` for ``pixelwise_masks``, none for the other outputs."""
        return tuple("HWC" if n == "pixelwise_masks" else "" for n in self.output_names())

    def _options(self) -> CocoOptions:
        args = self.args
        images = args["images"]
        return CocoOptions(
            ltrb=args["ltrb"],
            ratio=args["ratio"],
            size_threshold=args["size_threshold"],
            skip_empty=args["skip_empty"],
            include_iscrowd=args["include_iscrowd"],
            avoid_class_remapping=args["avoid_class_remapping"],
            polygons=bool(args["polygon_masks"] or args["masks"] or args["pixelwise_masks"]),
            rle=args["pixelwise_masks"],
            images=None if images is None else tuple(images),
        )

    def _load_index(self) -> CocoIndex:
        args = self.args
        if args["preprocessed_annotations"]:
            return self._preprocessed(args["preprocessed_annotations"])
        from feedline.readers.coco.parse import parse_coco

        path = args["annotations_file"]
        options = self._options()
        cache_dir = resolve_cache_dir(args["cache_dir"])
        index = cache_entry(cache_dir, path, options) if cache_dir else None
        if index is None:
            raw = parse_coco(path, options.polygons, options.rle)
            try:
                index = build_index(raw, options)
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
            del raw
            if cache_dir:
                store_in_cache(cache_dir, path, options, index)
        return index

    def _preprocessed(self, directory: str) -> CocoIndex:
        index, has_ids = load_preprocessed(directory)
        saved = index.options
        wanted = self._options()
        missing = (
            wanted.polygons and not saved.polygons,
            wanted.rle and not saved.rle,
            self.args["image_ids"] and not has_ids,
        )
        if any(missing):
            kind = ("polygon", "pixelwise mask", "image id")[missing.index(True)]
            raise ValueError(
                f"readers.coco {self.ctx.name!r}: the preprocessed annotations in "
                f"{directory!r} were saved without {kind} data; save them with the same mask "
                "argument"
            )
        return index

    def index(self) -> Sequence[int]:
        """Parse (or load) the annotations and check that every listed image exists."""
        args = self.args
        index = self._load_index()
        source = args["annotations_file"] or args["preprocessed_annotations"]
        if args["save_preprocessed_annotations"]:
            from feedline.readers.coco.dali_files import save_dali

            save_dali(index, args["save_preprocessed_annotations_dir"], args["image_ids"])
        if len(index) == 0:
            raise ValueError(f"readers.coco {self.ctx.name!r}: {source!r} gives no samples")
        too_big = (index.image_ids < -(2**31)) | (index.image_ids >= 2**31)
        if args["image_ids"] and too_big.any():
            at = int(np.flatnonzero(too_big)[0])
            raise ValueError(
                f"readers.coco {self.ctx.name!r}: image id {index.image_ids[at]} of "
                f"{index.file_names[at]!r} does not fit the int32 image_ids output"
            )
        _check_files(args["file_root"], index.file_names, source)
        self._coco = index
        self._root = args["file_root"]
        # Plain ndarray views: slicing a cache-loaded np.memmap costs a subclass round trip.
        self._boxes, self._labels = np.asarray(index.bboxes), np.asarray(index.labels)
        self._offsets = index.ann_off.tolist()
        return range(len(index))

    def load(self, item: int) -> tuple[np.ndarray, ...]:
        """The outputs of sample ``item``."""
        index = self._coco
        assert index is not None
        first, end = self._offsets[item], self._offsets[item + 1]
        out: list[np.ndarray] = [
            self.read_bytes(os.path.join(self._root, index.file_names[item])),
            self._boxes[first:end].copy(),
            self._labels[first:end].copy(),
        ]
        if self.args["polygon_masks"] or self.args["masks"]:
            out.extend(index.polygons(item, coordinate_units=self.args["masks"]))
        if self.args["pixelwise_masks"]:
            from feedline.readers.coco.masks import pixelwise_mask

            out.append(pixelwise_mask(index, item))
        if self.args["image_ids"]:
            out.append(np.array([index.image_ids[item]], np.int32))
        return tuple(out)

    def source_info(self, item: int) -> str:
        """The image's ``file_name``."""
        assert self._coco is not None
        return self._coco.file_names[item]


def _check_files(root: str, names: Sequence[str], source: str) -> None:
    """Raise FileNotFoundError naming the images of ``names`` missing under ``root``."""
    unique = set(names)
    joined = "\0".join(unique)
    nested = (
        {name for name in unique if "/" in name or os.sep in name}
        if "/" in joined or os.sep in joined
        else set()
    )
    by_dir: dict[str, set[str]] = {"": unique - nested} if len(nested) < len(unique) else {}
    for name in nested:
        folder, base = os.path.split(name)
        by_dir.setdefault(folder, set()).add(base)
    missing: list[str] = []
    for folder, bases in by_dir.items():
        try:
            present = set(os.listdir(os.path.join(root, folder)))
        except OSError:
            present = set()
        missing += [os.path.join(folder, b) for b in bases - present]
    if missing:
        missing.sort()
        raise FileNotFoundError(
            f"{len(missing)} image file(s) listed in {source!r} are missing under file_root "
            f"{root!r}, e.g. {', '.join(map(repr, missing[:3]))}"
        )


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.coco``."""
    registry.add_operator(COCO_SCHEMA, kernels={"cpu": CocoReader})
