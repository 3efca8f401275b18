"""check_operator passes a sound operator and names the defect of each faulty one."""

from __future__ import annotations

import numpy as np
import pytest

from feedline.core.plugins import PluginSystem
from feedline.testing import OperatorExample, check_operator
from tests.testing import faulty_plugin

IMAGES = [np.arange(24 * (i + 1), dtype=np.float64).reshape(4, 2 * (i + 1), 3) for i in range(4)]
EXAMPLE = OperatorExample([IMAGES], ["HWC"])


@pytest.fixture(autouse=True)
def _faulty(installed_plugins: PluginSystem) -> None:
    installed_plugins.register(faulty_plugin, "faulty")  # beside external_source, which feeds it


def test_a_sound_operator_passes_every_check() -> None:
    assert check_operator("kit.good", EXAMPLE) == ["schema", "docs", "outputs", "threads", "seed"]


def test_without_an_example_only_the_schema_and_docs_are_checked() -> None:
    assert check_operator("kit.good") == ["schema", "docs"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("kit.undocumented", "undocumented arguments or inputs: scale"),
        ("kit.wrong_layout", "declares layout 'HWC' but its samples are 1-D"),
        ("kit.threaded", "num_threads=3 vs 1"),
        ("kit.missing", "not registered"),
    ],
)
def test_each_defect_is_named(name: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_operator(name, EXAMPLE)


def test_an_operator_that_ignores_the_seed_fails_the_repeat() -> None:
    with pytest.raises(AssertionError, match="a second run with the same seed"):
        check_operator("kit.global_rng", EXAMPLE, thread_counts=(2,))
