"""fn.readers.coco inside pipelines: outputs, arguments, aliases, errors, preprocessing, cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.pipeline import Pipeline
from feedline.core.types import DataType
from feedline.readers.coco.store import CACHE_ENV
from tests.readers.coco.data import (
    PIXELWISE,
    REAL_COCO,
    SKIP_REASON,
    make_document,
    reference_mask,
    reference_samples,
    write_dataset,
)

pytestmark = [
    pytest.mark.usefixtures("registry"),
    pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning"),
]


@pytest.fixture
def dataset(tmp_path: Path) -> tuple[str, str, dict[str, Any]]:
    doc = make_document()
    ann = write_dataset(tmp_path / "data", doc, indent=2)
    return str(tmp_path / "data"), str(ann), doc


def coco_pipe(bs: int = 3, **kwargs: Any) -> Pipeline:
    @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=1)
    def pipe() -> Any:
        return tuple(fn.readers.coco(name="Reader", **kwargs))

    return pipe()


def read_epoch(**kwargs: Any) -> tuple[Pipeline, list[list[Any]]]:
    """Every sample of one epoch: a list of outputs (arrays) plus the source_info."""
    pipe = coco_pipe(**kwargs)
    pipe.build()
    n = pipe.epoch_size("Reader")
    samples: list[list[Any]] = []
    while len(samples) < n:
        outputs = pipe.run()
        for i in range(len(outputs[0])):
            if len(samples) < n:
                samples.append([np.asarray(o[i]) for o in outputs] + [outputs[0][i].source_info()])
    return pipe, samples


def check_samples(root: str, samples: list[list[Any]], expected: list[dict[str, Any]],
                  mode: str, image_ids: bool, ratio: bool = False) -> None:  # fmt: skip
    assert len(samples) == len(expected)
    for got, want in zip(samples, expected, strict=True):
        assert got[-1] == want["file_name"]
        assert got[0].tobytes() == (Path(root) / want["file_name"]).read_bytes()
        assert np.array_equal(got[1], want["bboxes"]) and got[1].dtype == np.float32
        assert np.array_equal(got[2], want["labels"]) and got[2].dtype == np.int32
        k = 3
        if mode in ("polygons", "masks"):
            factor = 2 if mode == "masks" else 1
            rows = want["polygons"] * [1, factor, factor]
            assert np.array_equal(got[3], rows) and got[3].dtype == np.int32
            assert np.array_equal(got[4], want["vertices"]) and got[4].dtype == np.float32
            k = 5
        elif mode == "pixelwise":
            assert np.array_equal(got[3], reference_mask(want, ratio)) and got[3].dtype == np.int32
            k = 4
        if image_ids:
            assert got[k].tolist() == [want["id"]] and got[k].dtype == np.int32


MODES = {
    "none": {},
    "polygons": {"polygon_masks": True},
    "masks": {"masks": True},
    "pixelwise": {"pixelwise_masks": True},
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("flags", [(0, 0, 0, 0), (1, 1, 1, 1), (1, 0, 1, 0), (0, 1, 0, 1)], ids=str)
def test_outputs_generated(dataset: tuple, mode: str, flags: tuple[int, ...]) -> None:
    root, ann, doc = dataset
    ltrb, ratio, skip_empty, raw_ids = map(bool, flags)
    kwargs = dict(ltrb=ltrb, ratio=ratio, skip_empty=skip_empty, avoid_class_remapping=raw_ids)
    with pytest.warns(DeprecationWarning) if mode == "masks" else _no_warning():
        pipe, samples = read_epoch(file_root=root, annotations_file=ann, image_ids=True,
                                   **MODES[mode], **kwargs)  # fmt: skip
    check_samples(root, samples, reference_samples(doc, **kwargs), mode, True, ratio)
    pipe.close()


class _no_warning:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def check_real_files(images: Path, annotations: Path, count: int, mode: str, ratio: bool) -> None:
    root, ann = str(images), str(annotations)
    doc = json.loads(annotations.read_text())
    pipe, samples = read_epoch(bs=16, file_root=root, annotations_file=ann, ratio=ratio,
                               include_iscrowd=mode == "pixelwise", **MODES[mode])  # fmt: skip
    expected = reference_samples(doc, ratio=ratio, include_iscrowd=mode == "pixelwise")
    assert len(samples) == count
    check_samples(root, samples, expected, mode, False, ratio)
    pipe.close()


@pytest.mark.parametrize("mode", ["polygons", "pixelwise"])
@pytest.mark.parametrize("ratio", [False, True])
def test_outputs_bundled_pixelwise_sample(mode: str, ratio: bool) -> None:
    check_real_files(PIXELWISE / "images", PIXELWISE / "instances.json", 6, mode, ratio)


@pytest.mark.skipif(not REAL_COCO[1].exists(), reason=SKIP_REASON)
@pytest.mark.parametrize("mode", ["polygons", "pixelwise"])
@pytest.mark.parametrize("ratio", [False, True])
def test_outputs_real_coco(mode: str, ratio: bool) -> None:
    check_real_files(*REAL_COCO, 128, mode, ratio)


def test_output_names_layouts_and_types(dataset: tuple) -> None:
    root, ann, _ = dataset
    pipe = coco_pipe(file_root=root, annotations_file=ann, pixelwise_masks=True, image_ids=True)
    pipe.build()
    outputs = pipe.run()
    assert [o.layout() for o in outputs] == ["", "", "", "HWC", ""]
    assert [o.dtype for o in outputs] == [DataType.UINT8, DataType.FLOAT, DataType.INT32,
                                          DataType.INT32, DataType.INT32]  # fmt: skip
    assert len(outputs[0]) == 3
    pipe.close()


def test_images_argument_and_sharding(dataset: tuple) -> None:
    root, ann, doc = dataset
    names = ["g.jpg", "missing.jpg", "a.jpg", "g.jpg", "with space.jpg"]
    pipe, samples = read_epoch(file_root=root, annotations_file=ann, images=names)
    check_samples(root, samples, reference_samples(doc, images=names), "none", False)
    assert pipe.reader_meta("Reader")["epoch_size"] == 4
    pipe.close()
    pipe = coco_pipe(bs=2, file_root=root, annotations_file=ann, num_shards=2, shard_id=1)
    pipe.build()
    data = pipe.run()[0]
    by_id = [e["file_name"] for e in sorted(doc["images"], key=lambda e: e["id"])]
    assert [data[i].source_info() for i in range(2)] == by_id[3:5]  # shard 1 = [7 // 2, 7)
    pipe.close()


def test_deprecated_aliases(dataset: tuple, tmp_path: Path) -> None:
    root, ann, doc = dataset
    out_dir = str(tmp_path / "meta")
    with pytest.warns(DeprecationWarning) as record:
        pipe = coco_pipe(file_root=root, annotations_file=ann, save_img_ids=True,
                         dump_meta_files=True, dump_meta_files_path=out_dir)  # fmt: skip
    assert {str(w.message).split("`")[1] for w in record} == {
        "save_img_ids", "dump_meta_files", "dump_meta_files_path"
    }  # fmt: skip
    pipe.build()
    assert pipe.run()[3][0].shape() == [1]
    pipe.close()
    with pytest.warns(DeprecationWarning, match="meta_files_path"):
        pipe, samples = read_epoch(file_root=root, meta_files_path=out_dir)
    check_samples(root, samples, reference_samples(doc), "none", False)
    pipe.close()


def test_preprocessed_annotations_round_trip(dataset: tuple, tmp_path: Path) -> None:
    root, ann, doc = dataset
    saved = str(tmp_path / "saved")
    kwargs = dict(skip_empty=True, ltrb=True)  # with ratio: see test_dali_files
    pipe, first = read_epoch(file_root=root, annotations_file=ann, pixelwise_masks=True,
                             save_preprocessed_annotations=True,
                             save_preprocessed_annotations_dir=saved, **kwargs)  # fmt: skip
    pipe.close()
    pipe, second = read_epoch(file_root=root, preprocessed_annotations=saved, pixelwise_masks=True)
    pipe.close()
    check_samples(root, second, reference_samples(doc, **kwargs), "pixelwise", False, True)
    for a, b in zip(first, second, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a[:-1], b[:-1], strict=True))
    pipe, polys = read_epoch(file_root=root, preprocessed_annotations=saved, polygon_masks=True)
    check_samples(root, polys, reference_samples(doc, **kwargs), "polygons", False)
    pipe.close()


def test_preprocessed_without_polygons(dataset: tuple, tmp_path: Path) -> None:
    root, ann, _ = dataset
    saved = str(tmp_path / "saved")
    pipe = coco_pipe(file_root=root, annotations_file=ann, save_preprocessed_annotations=True,
                     save_preprocessed_annotations_dir=saved)  # fmt: skip
    pipe.build()
    pipe.close()
    pipe = coco_pipe(file_root=root, preprocessed_annotations=saved, polygon_masks=True)
    with pytest.raises(ValueError, match="saved without polygon data"):
        pipe.build()


def test_cache_from_environment(dataset: tuple, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    root, ann, doc = dataset
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    pipe, _ = read_epoch(file_root=root, annotations_file=ann, polygon_masks=True)
    pipe.close()
    assert len(list((tmp_path / "cache").iterdir())) == 1

    def no_parsing(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr("feedline.readers.coco.parse.parse_coco", no_parsing)
    pipe, samples = read_epoch(file_root=root, annotations_file=ann, polygon_masks=True)
    check_samples(root, samples, reference_samples(doc), "polygons", False)
    pipe.close()
    with pytest.raises(AssertionError, match="parsed although cached"):
        coco_pipe(file_root=root, annotations_file=ann, cache_dir="").build()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"polygon_masks": True, "pixelwise_masks": True}, ValueError, "mutually exclusive"),
        ({"masks": True, "polygon_masks": True}, ValueError, "give only one"),
        ({"annotations_file": ""}, ValueError, "give annotations_file or preprocessed_annot"),
        ({"save_preprocessed_annotations": True}, ValueError, "go together"),
        ({"save_preprocessed_annotations_dir": "x"}, ValueError, "go together"),
        ({"skip_cached_images": True}, ValueError, "skip_cached_images is not supported"),
        ({"annotations_file": "/nonexistent/ann.json"}, FileNotFoundError, "/nonexistent/ann"),
        ({"file_root": "/nonexistent/root"}, FileNotFoundError, "7 image file.*missing under"),
    ],
)
def test_build_errors(dataset: tuple, kwargs: dict, error: type, match: str) -> None:
    root, ann, _ = dataset
    args = {"file_root": root, "annotations_file": ann, **kwargs}
    with pytest.raises(error, match=match):
        coco_pipe(**args).build()


@pytest.mark.parametrize("key", ["ltrb", "ratio", "skip_empty", "size_threshold", "images",
                                 "annotations_file"])  # fmt: skip
def test_preprocessed_rejects_parsing_arguments(dataset: tuple, tmp_path: Path, key: str) -> None:
    root, ann, _ = dataset
    value = {"size_threshold": 2.0, "images": ["a.jpg"], "annotations_file": ann}.get(key, True)
    with pytest.raises(ValueError, match=f"{key} cannot be used with preprocessed_annotations"):
        coco_pipe(file_root=root, preprocessed_annotations=str(tmp_path), **{key: value}).build()


def test_unknown_argument_is_named(dataset: tuple) -> None:
    root, ann, _ = dataset
    with pytest.raises(TypeError, match="'polygon_mask'.*polygon_masks"):
        coco_pipe(file_root=root, annotations_file=ann, polygon_mask=True)


def test_missing_image_at_build_and_with_lazy_init(dataset: tuple) -> None:
    root, ann, _ = dataset
    (Path(root) / "sub" / "c.jpg").unlink()
    with pytest.raises(FileNotFoundError, match=r"1 image file.*'sub/c.jpg'"):
        coco_pipe(file_root=root, annotations_file=ann).build()
    pipe = coco_pipe(file_root=root, annotations_file=ann, lazy_init=True)
    pipe.build()
    with pytest.raises(OperatorError, match="sub/c.jpg"):
        pipe.run()
    pipe.close()


def test_image_removed_after_build_names_the_file(dataset: tuple) -> None:
    root, ann, _ = dataset
    pipe = coco_pipe(file_root=root, annotations_file=ann)
    pipe.build()
    (Path(root) / "a.jpg").unlink()
    with pytest.raises(OperatorError) as info:
        pipe.run()
    assert "a.jpg" in str(info.value)
    pipe.close()


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    doc = make_document()
    doc["annotations"][4]["bbox"] = [1, 2, 3]
    ann = str(write_dataset(tmp_path, doc, indent=1))
    with pytest.raises(ValueError, match=r"instances.json: annotations\[4\] \(line \d+, col"):
        coco_pipe(file_root=str(tmp_path), annotations_file=ann).build()
    Path(ann).write_text(Path(ann).read_text()[:-20])
    with pytest.raises(ValueError, match=r"instances.json: invalid JSON at line \d+, column"):
        coco_pipe(file_root=str(tmp_path), annotations_file=ann).build()


def test_image_ids_must_fit_int32(tmp_path: Path) -> None:
    doc = make_document()
    doc["images"][0]["id"] = 2**31
    ann = write_dataset(tmp_path, doc)
    coco_pipe(file_root=str(tmp_path), annotations_file=str(ann)).build()
    with pytest.raises(ValueError, match=r"image id 2147483648 of 'b.jpg'"):
        coco_pipe(file_root=str(tmp_path), annotations_file=str(ann), image_ids=True).build()


def test_import_stays_light() -> None:
    code = (
        "import sys, feedline, feedline.readers.coco, feedline.readers.coco.parse; "
        "print('pycocotools' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
