"""``feedline.backend``'s library queries that DALI programs use to pick a code path."""

from __future__ import annotations

import feedline.backend
import feedline.backend_impl


def test_nvjpeg_version_is_minus_one_as_dali_2_reports() -> None:
    assert feedline.backend.GetNvjpegVersion() == -1
    assert feedline.backend_impl.GetNvjpegVersion is feedline.backend.GetNvjpegVersion
