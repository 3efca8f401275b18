"""Malformed COCO annotation files and file lists through ``readers.coco`` and ``readers.file``.

Every case either reads as the documentation says or fails with an error that names the file
(and the entry or line where the reader knows it); nothing hangs or crashes. Fixed cases cover
each kind of damage; hypothesis damages a valid small annotation file and generates file lists.
"""

from __future__ import annotations

import faulthandler
import io
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import fn, pipeline_def

#: Whole-test watchdog: a hanging reader dumps every thread's stack and fails the run.
WATCHDOG_S = 120
#: Exception types that say nothing about the input: a reader must turn them into its own errors.
RAW_ERRORS = (KeyError, TypeError, IndexError, AttributeError, UnicodeDecodeError, AssertionError)
_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), (10, 200, 30)).save(buf, "JPEG")
    return buf.getvalue()


def valid_coco() -> dict[str, Any]:
    """A small valid COCO document over ``a.jpg`` and ``b.jpg``."""
    return {
        "images": [
            {"id": 1, "file_name": "a.jpg", "width": 8, "height": 6},
            {"id": 2, "file_name": "b.jpg", "width": 8, "height": 6},
        ],
        "categories": [{"id": 7, "name": "x"}, {"id": 3, "name": "y"}],
        "annotations": [
            {
                "id": 10,
                "image_id": 1,
                "category_id": 3,
                "bbox": [1, 1, 4, 3],
                "iscrowd": 0,
                "segmentation": [[1, 1, 5, 1, 5, 4]],
            },
            {"id": 11, "image_id": 2, "category_id": 7, "bbox": [0, 0, 2, 2], "iscrowd": 0},
        ],
    }


@pytest.fixture(scope="module")
def image_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("images")
    for name in ("a.jpg", "b.jpg"):
        (root / name).write_bytes(_jpeg())
    return root


def run_once(graph: Callable[[], Any]) -> list[np.ndarray] | Exception:
    """Build a one-sample pipeline and run one iteration: its outputs, or what it raised."""

    def outputs() -> tuple[Any, ...]:
        return tuple(graph())

    pipe = pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)(
        outputs
    )()
    try:
        pipe.build()
        return [np.asarray(out.at(0)) for out in pipe.run()]
    except Exception as exc:
        return exc
    finally:
        pipe.close()


def read_coco(root: Path, annotations: Path, **kwargs: Any) -> list[np.ndarray] | Exception:
    """``(image, bboxes, labels)`` of the first sample, or the error."""
    return run_once(
        lambda: fn.readers.coco(file_root=str(root), annotations_file=str(annotations), **kwargs)
    )


def assert_clear(outcome: list[np.ndarray] | Exception, path: Path, *details: str) -> None:
    """An error of the reader's own (not a raw Python one) naming ``path`` and ``details``."""
    assert isinstance(outcome, Exception), f"expected an error, read {outcome}"
    message = str(outcome)
    assert str(path) in message, f"the error does not name {path}: {outcome!r}"
    for detail in details:
        assert detail in message, f"the error does not say {detail!r}: {outcome!r}"
    cause = outcome.__cause__ or outcome
    assert not isinstance(cause, RAW_ERRORS) or str(path) in str(cause), repr(cause)


def _write(tmp_path: Path, data: bytes | str | Any, name: str = "instances.json") -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data)
    else:
        path.write_text(json.dumps(data))
    return path


def _edit(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = valid_coco()
    change(doc)
    return doc


def _set(section: str, index: int, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc[section][index].__setitem__(key, value)


def _drop(section: str, index: int, key: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc[section][index].pop(key)


VALID_TEXT = json.dumps(valid_coco())

#: name → (file content, what the error must also say)
BROKEN_COCO: dict[str, tuple[bytes | str | dict[str, Any], tuple[str, ...]]] = {
    "empty": (b"", ()),
    "whitespace": (b"  \n", ()),
    "truncated": (VALID_TEXT[: len(VALID_TEXT) // 2], ("line",)),
    "not_json": ("images: []", ("line",)),
    "top_level_list": ("[]", ()),
    "non_utf8": (
        VALID_TEXT.replace("a.jpg", "a\udcff.jpg").encode("utf-8", "surrogateescape"),
        ("UTF-8", "line 1"),
    ),
    "latin1": (VALID_TEXT.replace("a.jpg", "\xe9.jpg").encode("latin-1"), ("UTF-8",)),
    "no_images": (_edit(lambda d: d.pop("images")), ("images",)),
    "images_not_list": (_edit(lambda d: d.__setitem__("images", {"id": 1})), ("images",)),
    "image_not_object": (_edit(lambda d: d["images"].__setitem__(0, 5)), ("images[0]",)),
    "image_without_id": (_edit(_drop("images", 0, "id")), ("images[0]", "id")),
    "image_without_name": (_edit(_drop("images", 1, "file_name")), ("images[1]", "file_name")),
    "image_without_width": (_edit(_drop("images", 0, "width")), ("images[0]", "width")),
    "id_as_string": (_edit(_set("images", 0, "id", "1")), ("images[0]", "id")),
    "id_as_float": (_edit(_set("images", 0, "id", 1.5)), ("images[0]", "id")),
    "id_beyond_64_bits": (_edit(_set("images", 0, "id", 2**70)), ("64 bits",)),
    "width_as_string": (_edit(_set("images", 0, "width", "8")), ("images[0]", "width")),
    "width_zero": (_edit(_set("images", 1, "width", 0)), ("images[1]", "width")),
    "height_negative": (_edit(_set("images", 0, "height", -6)), ("images[0]", "height")),
    "name_as_number": (_edit(_set("images", 0, "file_name", 3)), ("images[0]", "file_name")),
    "name_empty": (_edit(_set("images", 0, "file_name", "")), ("images[0]", "file_name")),
    "category_id_null": (
        _edit(lambda d: d["categories"][0].__setitem__("id", None)),
        ("categories[0]", "id"),
    ),
    "annotations_not_list": (_edit(lambda d: d.__setitem__("annotations", "x")), ("annotations",)),
    "annotation_without_bbox": (_edit(_drop("annotations", 0, "bbox")), ("annotations[0]", "bbox")),
    "annotation_without_image_id": (
        _edit(_drop("annotations", 1, "image_id")),
        ("annotations[1]", "image_id"),
    ),
    "annotation_without_category": (
        _edit(_drop("annotations", 0, "category_id")),
        ("annotations[0]", "category_id"),
    ),
    "bbox_as_string": (
        _edit(_set("annotations", 0, "bbox", "1 1 4 3")),
        ("annotations[0]", "bbox"),
    ),
    "bbox_of_three": (_edit(_set("annotations", 0, "bbox", [1, 1, 4])), ("annotations[0]", "bbox")),
    "bbox_with_null": (
        _edit(_set("annotations", 0, "bbox", [1, None, 4, 3])),
        ("annotations[0]", "bbox"),
    ),
    "bbox_with_bool": (
        _edit(_set("annotations", 1, "bbox", [True, 0, 2, 2])),
        ("annotations[1]", "bbox"),
    ),
    "iscrowd_string": (
        _edit(_set("annotations", 0, "iscrowd", "no")),
        ("annotations[0]", "iscrowd"),
    ),
    "iscrowd_two": (_edit(_set("annotations", 0, "iscrowd", 2)), ("annotations[0]", "iscrowd")),
    "category_beyond_64_bits": (_edit(_set("annotations", 0, "category_id", -(2**65))), ("64",)),
    "segmentation_string": (
        _edit(_set("annotations", 0, "segmentation", "oops")),
        ("annotations[0]", "segmentation"),
    ),
    "polygon_odd": (
        _edit(_set("annotations", 0, "segmentation", [[1, 2, 3]])),
        ("annotations[0]", "odd"),
    ),
    "rle_bad_size": (
        _edit(_set("annotations", 0, "segmentation", {"size": [6], "counts": [48]})),
        ("annotations[0]", "size"),
    ),
    "rle_bad_counts": (
        _edit(_set("annotations", 0, "segmentation", {"size": [6, 8], "counts": "\x01\x02"})),
        ("annotations[0]", "counts"),
    ),
    "all_images_missing_on_disk": (
        _edit(lambda d: [im.__setitem__("file_name", f"gone{im['id']}.jpg") for im in d["images"]]),
        ("gone",),
    ),
    "no_images_at_all": (_edit(lambda d: d.__setitem__("images", [])), ("no samples",)),
}
#: Cases whose errors are about the segmentation, only read when masks are requested.
MASK_CASES = {"segmentation_string", "polygon_odd", "rle_bad_size", "rle_bad_counts"}


@pytest.mark.parametrize("case", list(BROKEN_COCO))
def test_broken_annotation_files_are_named(image_root: Path, tmp_path: Path, case: str) -> None:
    content, details = BROKEN_COCO[case]
    path = _write(tmp_path, content)
    masks = {"pixelwise_masks": True} if case in MASK_CASES else {}
    assert_clear(read_coco(image_root, path, **masks), path, *details)


def _boxes_of(doc: dict[str, Any], root: Path, tmp_path: Path, **kwargs: Any) -> list[np.ndarray]:
    outcome = read_coco(root, _write(tmp_path, doc), **kwargs)
    assert not isinstance(outcome, Exception), outcome
    return outcome


def test_negative_boxes_are_dropped_by_the_size_threshold(image_root: Path, tmp_path: Path) -> None:
    doc = valid_coco()
    extra = [[1, 1, -4, 3], [1, 1, 4, -3], [-1, -1, 0.05, 3]]
    doc["annotations"] += [
        {"image_id": 1, "category_id": 3, "bbox": box, "iscrowd": 0} for box in extra
    ]
    _, boxes, labels = _boxes_of(doc, image_root, tmp_path)
    assert boxes.tolist() == [[1, 1, 4, 3]] and labels.ravel().tolist() == [2]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_number_tokens_are_refused(
    image_root: Path, tmp_path: Path, token: str
) -> None:
    text = VALID_TEXT.replace("[1, 1, 4, 3]", f"[1, 1, {token}, 3]")
    path = _write(tmp_path, text)
    assert_clear(read_coco(image_root, path), path, token)


def test_huge_numbers_read_as_json_does(image_root: Path, tmp_path: Path) -> None:
    doc = valid_coco()
    doc["annotations"][0]["bbox"] = [1e30, 1, 4, 3]
    text = json.dumps(doc).replace("1e+30", "1e400")  # beyond float64: infinity, as json reads it
    _, boxes, _ = _boxes_of(text, image_root, tmp_path)
    assert np.isinf(boxes[0, 0]) and boxes[0, 1:].tolist() == [1, 4, 3]


def test_unknown_image_ids_and_categories_follow_the_rules(
    image_root: Path, tmp_path: Path
) -> None:
    doc = valid_coco()
    doc["annotations"] += [
        {"image_id": 99, "category_id": 3, "bbox": [0, 0, 5, 5]},  # image not listed: ignored
        {"image_id": 1, "category_id": 42, "bbox": [2, 2, 3, 3]},  # unknown category: label 0
    ]
    _, boxes, labels = _boxes_of(doc, image_root, tmp_path)
    assert boxes.tolist() == [[1, 1, 4, 3], [2, 2, 3, 3]]
    assert labels.ravel().tolist() == [2, 0]


def test_extra_keys_and_missing_optional_lists_are_fine(image_root: Path, tmp_path: Path) -> None:
    doc = {"info": {"x": [1, {"y": None}]}, "images": valid_coco()["images"]}
    image, boxes, labels = _boxes_of(doc, image_root, tmp_path)
    assert image.size > 0 and boxes.shape == (0, 4) and labels.size == 0


_DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1), st.binary(max_size=0)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.binary(min_size=1, max_size=1)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.binary(max_size=0)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=4)),
    st.tuples(
        st.just("insert"),
        st.floats(0, 1),
        st.sampled_from([b"{", b"}", b"[", b"]", b",", b'"', b"null", b"-1", b"1e999", b"\\"]),
    ),
)


def _damaged(damage: list[tuple[str, float, bytes]]) -> bytes:
    data = bytearray(json.dumps(valid_coco(), indent=1).encode())
    for kind, where, payload in damage:
        at = min(int(where * len(data)), max(len(data) - 1, 0))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip" and data:
            data[at] ^= payload[0] or 1
        elif kind == "delete" and data:
            del data[at]
        elif kind == "insert":
            data[at:at] = payload
    return bytes(data)


@_SETTINGS
@given(damage=st.lists(_DAMAGE, min_size=1, max_size=4), masks=st.booleans())
def test_randomly_damaged_annotation_files(
    image_root: Path, tmp_path: Path, damage: list[tuple[str, float, bytes]], masks: bool
) -> None:
    path = _write(tmp_path, _damaged(damage))
    outcome = read_coco(image_root, path, pixelwise_masks=masks)
    if isinstance(outcome, Exception):
        assert_clear(outcome, path)
    else:
        image, boxes, labels = outcome[:3]
        assert image.ndim == 1 and boxes.ndim == 2 and boxes.shape[1] == 4
        assert labels.shape[0] == boxes.shape[0]


# --- file lists ---------------------------------------------------------------------------------


def read_list(path: Path, root: Path | None = None) -> list[np.ndarray] | Exception:
    """``(bytes, label)`` of the first sample of ``readers.file(file_list=path)``, or the error."""
    extra = {"file_root": str(root)} if root is not None else {}
    return run_once(lambda: fn.readers.file(file_list=str(path), **extra))


@pytest.fixture()
def list_dir(tmp_path: Path) -> Path:
    for name in ("a.jpg", "b c.jpg", "é.jpg"):
        (tmp_path / name).write_bytes(_jpeg())
    return tmp_path


#: name → (list content, what the error must also say)
BROKEN_LISTS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "no_label": (b"a.jpg 0\nb c.jpg\n", ("line 2",)),
    "label_word": (b"a.jpg x\n", ("line 1",)),
    "label_negative": (b"a.jpg 0\n\na.jpg -1\n", ("line 3",)),
    "label_fraction": (b"a.jpg 3.5\n", ("line 1",)),
    "extra_column": (b"a.jpg 3 extra\n", ("line 1",)),
    "label_beyond_int32": (b"a.jpg 2147483648\n", ("line 1",)),
    "label_huge": (b"a.jpg " + b"9" * 5000 + b"\n", ("line 1",)),
    "only_a_label": (b"7\n", ("line 1",)),
    "empty": (b"", ()),
    "blank_lines_only": (b"\n \r\n\t\n", ()),
    "nul_in_name": (b"a.jpg 0\na\x00.jpg 0\n", ("line 2", "NUL")),
}


@pytest.mark.parametrize("case", list(BROKEN_LISTS))
def test_broken_file_lists_are_named(list_dir: Path, case: str) -> None:
    content, details = BROKEN_LISTS[case]
    path = _write(list_dir, content, "list.txt")
    outcome = read_list(path)
    assert_clear(outcome, path, *details)


@pytest.mark.parametrize("name", [b"gone.jpg", b"\xff\xfe.jpg", "g\u00f6ne.jpg".encode()])
def test_a_missing_listed_file_is_named_when_read(list_dir: Path, name: bytes) -> None:
    outcome = read_list(_write(list_dir, name + b" 1\na.jpg 0\n", "list.txt"))
    assert isinstance(outcome, Exception)
    shown = name.decode("utf-8", "surrogateescape")
    assert shown in str(outcome) or repr(shown)[1:-1] in str(outcome), outcome


@pytest.mark.parametrize(
    ("content", "label"),
    [
        (b"a.jpg 3\r\nb c.jpg 4\r\n", 3),  # CRLF
        (b"\n\n  \na.jpg 0012\n\n", 12),  # blank lines, leading zeros
        (b"b c.jpg\t2147483647 \n", 2147483647),  # tab separator, largest int32
        ("é.jpg 5\n".encode(), 5),  # UTF-8 name
        (b"a.jpg 1", 1),  # no final newline
    ],
)
def test_valid_file_list_variants(list_dir: Path, content: bytes, label: int) -> None:
    outcome = read_list(_write(list_dir, content, "list.txt"))
    assert not isinstance(outcome, Exception), outcome
    assert outcome[0].tobytes() == _jpeg() and int(outcome[1].ravel()[0]) == label


def test_non_utf8_names_are_kept_as_bytes(list_dir: Path) -> None:
    name = b"\xe9t\xe9.jpg"  # latin-1, not UTF-8
    (list_dir / "raw").mkdir()
    with open(os.path.join(bytes(list_dir / "raw"), name), "wb") as f:
        f.write(_jpeg())
    outcome = read_list(_write(list_dir, name + b" 9\n", "list.txt"), list_dir / "raw")
    assert not isinstance(outcome, Exception), outcome
    assert int(outcome[1].ravel()[0]) == 9


_LINE = st.one_of(
    st.sampled_from(["a.jpg", "b c.jpg", "é.jpg", "gone.jpg", ""]).flatmap(
        lambda name: st.tuples(
            st.just(name),
            st.sampled_from([" ", "\t", "  ", ""]),
            st.one_of(st.integers(-5, 2**40).map(str), st.sampled_from(["", "x", "1.5", "1 2"])),
            st.sampled_from(["\n", "\r\n", " \n"]),
        ).map("".join)
    ),
    st.text(max_size=12).map(lambda s: s + "\n"),
)


@_SETTINGS
@given(lines=st.lists(_LINE, max_size=6))
def test_generated_file_lists(list_dir: Path, lines: list[str]) -> None:
    path = _write(list_dir, "".join(lines).encode("utf-8", "surrogateescape"), "list.txt")
    outcome = read_list(path)
    if isinstance(outcome, Exception) and "cannot open" in str(outcome):
        # the first listed file does not exist ("gone.jpg", or "a.jpg 1" from "a.jpg 1 2"):
        # named with its path, joined to the list's directory
        assert f"cannot open '{list_dir}{os.sep}" in str(outcome), outcome
    elif isinstance(outcome, Exception):
        assert_clear(outcome, path)
    else:
        assert outcome[0].tobytes() == _jpeg() and 0 <= int(outcome[1].ravel()[0]) < 2**31
