"""DALI's preprocessed-annotation files: written byte for byte as DALI does, read back.

``dali_files/<config>/`` holds what DALI 2.4 (``nvidia-dali-cuda120``) wrote with
``save_preprocessed_annotations`` for the generated data set of ``data.py`` (file names without
spaces, which DALI's ``filenames.dat`` cannot hold) and each argument set of ``CONFIGS``;
:func:`regenerate` rewrites them where DALI is installed. The tests that run DALI itself skip
without it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.readers.coco.dali_files import load_dali
from tests.readers.coco.data import make_document, write_dataset

pytestmark = [
    pytest.mark.usefixtures("registry"),
    pytest.mark.filterwarnings(
        "ignore:__array__ implementation:DeprecationWarning",
        "ignore:readers.coco. masks",
        "ignore:Use `polygon_masks` instead:DeprecationWarning",
    ),
]

FIXTURES = Path(__file__).parent / "dali_files"
CONFIGS: dict[str, dict[str, Any]] = {
    "boxes": {"image_ids": True},
    "polygons": {"polygon_masks": True, "ltrb": True, "ratio": True, "skip_empty": True},
    "masks": {"masks": True, "include_iscrowd": False},
    "pixelwise": {"pixelwise_masks": True, "image_ids": True, "size_threshold": 5.0},
    "pixelwise_ratio": {"pixelwise_masks": True, "ratio": True, "avoid_class_remapping": True},
}
_PARSING = ("ltrb", "ratio", "skip_empty", "size_threshold")

try:
    import nvidia.dali as dali
    import nvidia.dali.fn  # noqa: F401  (dali.fn)
except ImportError:
    dali = None
needs_dali = pytest.mark.skipif(dali is None, reason="nvidia-dali-cuda120 is not installed")


def write_fixture_dataset(root: Path) -> Path:
    """The fixtures' data set: data.py's, with the space in a file name replaced."""
    doc = make_document()
    for image in doc["images"]:
        image["file_name"] = image["file_name"].replace(" ", "_")
    return write_dataset(root, doc)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("coco")
    return str(root), str(write_fixture_dataset(root))


def _epoch(module: Any, batch: int = 3, **kwargs: Any) -> list[list[np.ndarray]]:
    """Every sample of one epoch, with feedline (module ``feedline``) or DALI."""

    @module.pipeline_def(batch_size=batch, num_threads=1, device_id=None)
    def pipe() -> Any:
        return tuple(module.fn.readers.coco(name="Reader", **kwargs))

    p = pipe()
    p.build()
    n = p.epoch_size("Reader")
    samples: list[list[np.ndarray]] = []
    while len(samples) < n:
        outputs = p.run()
        for i in range(batch):
            if len(samples) < n:
                samples.append([np.array(o.at(i) if hasattr(o, "at") else o[i]) for o in outputs])
    return samples


class _Feedline:
    pipeline_def = staticmethod(pipeline_def)
    fn = fn


def _same(a: list[list[np.ndarray]], b: list[list[np.ndarray]], skip: int | None = None) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for k, (u, v) in enumerate(zip(x, y, strict=True)):
            if k != skip:
                assert u.dtype == v.dtype and np.array_equal(u, v), k


def _mask_output(config: dict[str, Any]) -> int | None:
    """Where the pixelwise mask is when it is rasterised from ratio-scaled vertices."""
    return 3 if config.get("pixelwise_masks") and config.get("ratio") else None


def _reading_args(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in _PARSING}


@pytest.mark.parametrize("name", CONFIGS)
def test_feedline_writes_what_dali_writes(dataset: tuple[str, str], tmp_path: Path,
                                          name: str) -> None:  # fmt: skip
    root, ann = dataset
    out = tmp_path / "out"
    _epoch(_Feedline, file_root=root, annotations_file=ann, save_preprocessed_annotations=True,
           save_preprocessed_annotations_dir=str(out), **CONFIGS[name])  # fmt: skip
    expected = sorted(os.listdir(FIXTURES / name))
    assert sorted(os.listdir(out)) == expected
    for file in expected:
        assert (out / file).read_bytes() == (FIXTURES / name / file).read_bytes(), file


@pytest.mark.parametrize("name", CONFIGS)
def test_feedline_reads_dali_files(dataset: tuple[str, str], name: str) -> None:
    root, ann = dataset
    config = CONFIGS[name]
    from_json = _epoch(_Feedline, file_root=root, annotations_file=ann, **config)
    saved = _epoch(_Feedline, file_root=root, preprocessed_annotations=str(FIXTURES / name),
                   **_reading_args(config))  # fmt: skip
    _same(from_json, saved, skip=_mask_output(config))


def test_ratio_masks_come_from_the_saved_vertices(dataset: tuple[str, str]) -> None:
    """The files do not say that the vertices were divided by the image size: DALI rasterises
    them as they are (tiny masks), and so does feedline (checked against DALI below)."""
    root, ann = dataset
    saved = _epoch(_Feedline, file_root=root, preprocessed_annotations=str(FIXTURES /
                   "pixelwise_ratio"), pixelwise_masks=True)  # fmt: skip
    from_json = _epoch(_Feedline, file_root=root, annotations_file=ann, pixelwise_masks=True)
    assert sum(int(s[3].astype(bool).sum()) for s in saved) < sum(
        int(s[3].astype(bool).sum()) for s in from_json
    )


def test_missing_data_is_named(dataset: tuple[str, str]) -> None:
    root, _ = dataset
    for config, missing in (
        ("boxes", {"polygon_masks": True}),
        ("polygons", {"pixelwise_masks": True}),
        ("polygons", {"image_ids": True}),
    ):
        with pytest.raises(ValueError, match="saved without"):
            _epoch(_Feedline, file_root=root, preprocessed_annotations=str(FIXTURES / config),
                   **missing)  # fmt: skip


def test_damaged_files_are_named(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "pixelwise", tmp_path / "d")
    load_dali(str(tmp_path / "d"))
    labels = tmp_path / "d" / "labels.dat"
    labels.write_bytes(labels.read_bytes()[:-2])
    with pytest.raises(ValueError, match="labels.dat: .* announced"):
        load_dali(str(tmp_path / "d"))
    shutil.copy(FIXTURES / "pixelwise" / "labels.dat", labels)
    rles = tmp_path / "d" / "masks_rles.dat"
    rles.write_bytes(rles.read_bytes()[:-4])
    with pytest.raises(ValueError, match="masks_rles.dat: damaged RLE table"):
        load_dali(str(tmp_path / "d"))


def test_names_with_spaces_survive(tmp_path: Path) -> None:
    """DALI splits filenames.dat on any whitespace; feedline on line ends only."""
    doc = make_document()
    ann = write_dataset(tmp_path, doc)
    out = tmp_path / "saved"
    first = _epoch(_Feedline, file_root=str(tmp_path), annotations_file=str(ann),
                   save_preprocessed_annotations=True,
                   save_preprocessed_annotations_dir=str(out))  # fmt: skip
    assert "with space.jpg\n" in (out / "filenames.dat").read_text()
    _same(first, _epoch(_Feedline, file_root=str(tmp_path), preprocessed_annotations=str(out)))


def test_old_feedline_layout_still_reads(dataset: tuple[str, str], tmp_path: Path) -> None:
    from feedline.readers.coco.index import CocoOptions, build_index
    from feedline.readers.coco.parse import parse_coco
    from feedline.readers.coco.store import save_index

    root, ann = dataset
    index = build_index(parse_coco(ann, True, False), CocoOptions(polygons=True))
    save_index(index, str(tmp_path / "old"))
    old = _epoch(_Feedline, file_root=root, preprocessed_annotations=str(tmp_path / "old"),
                 polygon_masks=True, image_ids=True)  # fmt: skip
    _same(old, _epoch(_Feedline, file_root=root, annotations_file=ann, polygon_masks=True,
                      image_ids=True))  # fmt: skip


@needs_dali
@pytest.mark.parametrize("name", CONFIGS)
def test_dali_and_feedline_read_the_files_alike(dataset: tuple[str, str], tmp_path: Path,
                                               name: str) -> None:  # fmt: skip
    """DALI reads the files feedline wrote, and both read them to the same outputs (the ratio
    masks included)."""
    root, ann = dataset
    out = tmp_path / "out"
    _epoch(_Feedline, file_root=root, annotations_file=ann, save_preprocessed_annotations=True,
           save_preprocessed_annotations_dir=str(out), **CONFIGS[name])  # fmt: skip
    args = _reading_args(CONFIGS[name])
    _same(_epoch(dali, file_root=root, preprocessed_annotations=str(out), **args),
          _epoch(_Feedline, file_root=root, preprocessed_annotations=str(out), **args))  # fmt: skip


@needs_dali
def test_dali_rejects_skip_cached_images_as_feedline_does(dataset: tuple[str, str]) -> None:
    root, ann = dataset
    with pytest.raises(RuntimeError, match="doesn't support `skip_cached_images`"):
        _epoch(dali, file_root=root, annotations_file=ann, skip_cached_images=True)
    with pytest.raises(ValueError, match="skip_cached_images is not supported"):
        _epoch(_Feedline, file_root=root, annotations_file=ann, skip_cached_images=True)


def regenerate() -> None:  # pragma: no cover - run by hand where DALI is installed
    """Rewrite ``dali_files/`` with DALI (``python -m tests.readers.coco.test_dali_files``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        ann = write_fixture_dataset(Path(tmp))
        for name, config in CONFIGS.items():
            shutil.rmtree(FIXTURES / name, ignore_errors=True)
            (FIXTURES / name).mkdir(parents=True)  # DALI does not create it
            _epoch(dali, file_root=tmp, annotations_file=str(ann),
                   save_preprocessed_annotations=True,
                   save_preprocessed_annotations_dir=str(FIXTURES / name), **config)  # fmt: skip


if __name__ == "__main__":
    regenerate()
