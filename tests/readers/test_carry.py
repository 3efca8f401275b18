"""The reader carry under ``on_error="skip"``: samples handed out in any count, exact positions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.pipeline import Pipeline
from feedline.readers.carry import Carry, load_each
from tests.core.test_errors_policy import registry  # noqa: F401  (the testing plugins)


def reader(bs: int = 4, **kwargs: Any) -> Pipeline:
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=2, exec_pipelined=False)
    def pipe() -> Any:
        return fn.testing.count(name="Reader", **kwargs)

    p = pipe()
    p.build()
    return p


def kernel(pipe: Pipeline) -> Any:
    return pipe._readers()["Reader"]


def values(tl: Any) -> list[int]:
    return [int(v) for v in tl.as_array().ravel()]


def test_replacement_shifts_the_stream_without_reordering() -> None:
    pipe = reader()
    assert values(pipe.run()[0]) == [0, 1, 2, 3]
    (fresh,) = kernel(pipe).replacement(3, 1)
    assert values(fresh) == [4, 5, 6]
    assert fresh.source_infos() == ["item-4", "item-5", "item-6"]
    assert values(pipe.run()[0]) == [7, 8, 9, 10]
    assert values(pipe.run()[0]) == [11, 12, 13, 14]
    pipe.close()


def test_position_with_a_carry_restores_exactly() -> None:
    pipe = reader(on_error="skip", bad_load=(5,))
    pipe.run()
    kernel(pipe).replacement(2, 1)  # 4, 6 (5 fails to load)
    state = kernel(pipe).state_dict()
    assert state["carry"]["skip"] == 2
    rest = [values(pipe.run()[0]) for _ in range(4)]
    pipe.close()
    resumed = reader(on_error="skip", bad_load=(5,))
    kernel(resumed).load_state_dict(state)
    assert [values(resumed.run()[0]) for _ in range(4)] == rest
    assert rest[0] == [7, 8, 9, 10]
    # the load failure before the saved position is not reported again
    assert kernel(resumed).take_skipped() == []
    resumed.close()


def test_malformed_carry_state_is_refused() -> None:
    pipe = reader()
    with pytest.raises(ValueError, match="'carry' must hold base and skip"):
        kernel(pipe).load_state_dict({"carry": {"skip": 1}})
    pipe.close()


def test_carry_drops_then_takes() -> None:
    carry = Carry({"base": 0}, 1, drop=3)
    records = carry.push([[np.array([i]) for i in range(2)]], ["a", "b"], [], "R", 0)
    assert records == [] and len(carry) == 0 and carry.drop == 1
    failure = (1, "bad", ValueError("broken"))
    records = carry.push([[np.array([5]), np.array([6])]], ["c", "d"], [failure], "R", 1)
    assert [(r.sample_index, r.source_info, r.error) for r in records] == [
        (1, "bad", "ValueError: broken")
    ]
    assert carry.infos == ["d"] and carry.position() == {"carry": {"base": {"base": 0}, "skip": 3}}
    columns, infos = carry.take(1)
    assert int(columns[0][0][0]) == 6 and infos == ["d"] and carry.empty()


def test_load_each_leaves_out_failures() -> None:
    def load(item: int) -> tuple[np.ndarray, ...]:
        if item == 2:
            raise OSError("gone")
        return (np.array([item]),)

    samples, infos, failures = load_each([1, 2, 3], load, str)
    assert [int(s[0][0]) for s in samples] == [1, 3] and infos == ["1", "3"]
    assert [(i, src, type(e)) for i, src, e in failures] == [(1, "2", OSError)]
