"""TFRecord feature descriptions for ``fn.readers.tfrecord`` (DALI's ``nvidia.dali.tfrecord``).

``import feedline.tfrecord as tfrec`` then ``tfrec.FixedLenFeature([], tfrec.int64, -1)``.
"""

from feedline.readers.tfrecord_format import (
    Feature,
    FixedLenFeature,
    VarLenFeature,
    float32,
    int64,
    string,
)

__all__ = ["Feature", "FixedLenFeature", "VarLenFeature", "float32", "int64", "string"]
