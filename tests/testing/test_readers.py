"""check_reader passes a reader built on the Reader base and catches an unstable one."""

from __future__ import annotations

import pytest

from feedline.core.plugins import PluginSystem
from feedline.testing import check_reader
from tests.testing import faulty_plugin


@pytest.fixture(autouse=True)
def _faulty(isolated_plugins: PluginSystem) -> None:
    isolated_plugins.register(faulty_plugin, "faulty")


@pytest.mark.parametrize("count", [3, 7, 10])
def test_a_reader_on_the_base_class_passes(count: int) -> None:
    done = check_reader(faulty_plugin.RowsReader, {"count": count}, batch_size=4)
    assert "checkpoint" in done and "shards=3 pad=True shuffle=True" in done


def test_a_reader_whose_samples_change_fails() -> None:
    with pytest.raises(AssertionError, match="misses"):
        check_reader("kit.unstable", {"count": 6})


def test_too_small_a_data_set_is_refused() -> None:
    with pytest.raises(AssertionError, match="has 2 samples"):
        check_reader("kit.rows", {"count": 2})


def test_a_class_that_is_no_kernel_is_named() -> None:
    with pytest.raises(AssertionError, match="FileNotFoundError is not the kernel"):
        check_reader(FileNotFoundError, {})
