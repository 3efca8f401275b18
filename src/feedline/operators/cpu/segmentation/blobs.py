"""Connected blobs of a mask and their bounding boxes, in any number of dimensions.

Two elements belong to one blob when they share a face (4-connectivity in 2-D, 6 in 3-D), as in
DALI's ``segmentation.random_object_bbox``. Masks of up to two dimensions go to OpenCV's
labelling (measured faster than SciPy's on large 2-D masks); others to ``scipy.ndimage``, which
is then needed (the ``segmentation`` extra).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from feedline.operators.cpu.common.opencv import import_cv2

__all__ = ["blob_boxes", "label_boxes"]

_OP = "segmentation.random_object_bbox"


def _import_ndimage() -> ModuleType:
    try:
        from scipy import ndimage
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{_OP}: masks of 3 or more dimensions need SciPy; install it with "
            "`pip install feedline[segmentation]`"
        ) from error
    return ndimage


def blob_boxes(mask: np.ndarray) -> np.ndarray:
    """The boxes of the face-connected blobs of the boolean ``mask``.

    Returns:
        ``(n, 2 * ndim)`` int32 rows ``[start..., end...]`` (end is one past the last element),
        one per blob, in the order the labelling numbers them.
    """
    ndim = mask.ndim
    if mask.size == 0 or not mask.any():
        return np.zeros((0, 2 * ndim), np.int32)
    if ndim <= 2:
        cv2 = import_cv2(_OP)
        plane = mask.reshape(1, -1) if ndim == 1 else mask
        _, _, stats, _ = cv2.connectedComponentsWithStats(
            plane.view(np.uint8), connectivity=4, ltype=cv2.CV_32S
        )
        x, y, w, h = (stats[1:, i] for i in range(4))
        if ndim == 1:
            return np.stack([x, x + w], axis=1).astype(np.int32)
        return np.stack([y, x, y + h, x + w], axis=1).astype(np.int32)
    ndimage = _import_ndimage()
    labels, _ = ndimage.label(mask)
    slices = ndimage.find_objects(labels)
    return np.array(
        [[s.start for s in box] + [s.stop for s in box] for box in slices], np.int32
    ).reshape(-1, 2 * ndim)


def label_boxes(data: np.ndarray, label: int) -> np.ndarray:
    """The boxes of the blobs of elements equal to ``label`` (see :func:`blob_boxes`)."""
    return blob_boxes(data == label)
