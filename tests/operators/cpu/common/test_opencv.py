"""Without OpenCV the operators that need it say which package to install."""

from __future__ import annotations

import sys

import pytest

from feedline.operators.cpu.common.opencv import import_cv2


def test_missing_opencv_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cv2", None)  # makes ``import cv2`` fail
    with pytest.raises(ModuleNotFoundError, match="clahe: needs OpenCV.*opencv-python-headless"):
        import_cv2("clahe")


def test_present_opencv_is_returned() -> None:
    assert hasattr(import_cv2("clahe"), "createCLAHE")
