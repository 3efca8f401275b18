"""tools/check_wheel.py: the timing table it prints, every round and both ratios against each
other configuration."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.tools.loading import load_tool

check_wheel = load_tool("check_wheel")

ROWS = {
    "prebuilt": [(300.0, 1.0), (240.0, 1.2)],
    "FEEDLINE_NATIVE=0": [(100.0, 3.0), (120.0, 2.5)],
    "DALI": [(150.0, 2.0), (80.0, 4.0)],
}


def test_every_round_is_printed_with_img_s_and_cpu_ms() -> None:
    lines = check_wheel.report_lines(ROWS, 4.0)
    assert lines[0].startswith("train pipeline, 2 threads, batch 64, 2 rounds x 4 s")
    assert lines[2].split() == ["1", "300", "1.00", "100", "3.00", "150", "2.00"]
    assert lines[3].split() == ["2", "240", "1.20", "120", "2.50", "80", "4.00"]
    assert lines[4].split() == ["best", "300", "1.00", "120", "2.50", "150", "2.00"]


def test_dali_ratios_from_the_best_figures_and_per_round() -> None:
    dali = check_wheel.report_lines(ROWS, 4.0)[-1]
    assert dali.startswith("prebuilt vs DALI: 2.00x the img/s, 2.00x less CPU per image")
    assert dali.endswith("per round: img/s 2.00x 3.00x, CPU 2.00x 3.33x")


def test_without_dali_only_the_fallback_is_compared() -> None:
    lines = check_wheel.report_lines({**ROWS, "DALI": []}, 4.0)
    assert "DALI" not in "\n".join(lines)
    assert lines[-1].startswith("prebuilt vs FEEDLINE_NATIVE=0: 2.50x the img/s, 2.50x less")


figures = st.tuples(st.floats(1, 1e4), st.floats(0.01, 100))


@given(st.lists(st.tuples(figures, figures), min_size=1, max_size=5))
def test_ratios_are_above_one_exactly_where_the_prebuilt_kernels_win(pairs: list) -> None:
    rows = {"prebuilt": [p for p, _ in pairs], "DALI": [d for _, d in pairs]}
    last = check_wheel.report_lines(rows, 1.0)[-1]
    per_round = last.split("per round: img/s ")[1]
    speeds, cpus = per_round.split(", CPU ")
    for (ours, theirs), speed, cpu in zip(pairs, speeds.split(), cpus.split(), strict=True):
        assert float(speed.rstrip("x")) == round(ours[0] / theirs[0], 2)
        assert float(cpu.rstrip("x")) == round(theirs[1] / ours[1], 2)
