"""Tests of segmentation parsing from JSON text: the compiled parser and simdjson must both give
json.loads' values (rounded to float32) and refuse what is not a COCO segmentation."""

from __future__ import annotations

import json
import math
import platform
import shutil
import struct
import subprocess
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline.readers.coco import segmentations as module
from feedline.readers.coco.segmentations import (
    LIBRARY,
    NULL,
    OBJECT,
    Segmentations,
    exact_paths,
    parse_segmentations,
)


@pytest.fixture(params=["compiled", "simdjson"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which parser reads the texts: the compiled one (skipped where it cannot be built) or
    simdjson alone."""
    if request.param == "compiled":
        if LIBRARY.try_load() is None:
            pytest.skip("the compiled COCO parser cannot be built here (no C compiler?)")
    else:
        monkeypatch.setattr(LIBRARY, "try_load", lambda: None)
    yield request.param


def float32(values: list[float]) -> np.ndarray:
    """``values`` rounded to float32 (beyond its range: ±inf, without a warning)."""
    with np.errstate(over="ignore"):
        return np.array(values, np.float64).astype(np.float32)


def parse(values: list[Any], **dump: Any) -> Segmentations | None:
    return parse_segmentations([json.dumps(v, **dump).encode() for v in values])


def expected_columns(values: list[Any]) -> tuple[list[int], list[int], np.ndarray]:
    """json.loads' view: polygons per segmentation, vertices per polygon, float32 coordinates."""
    polygons = [
        len(v) if isinstance(v, list) else OBJECT if v is not None else NULL for v in values
    ]
    lists = [p for v in values if isinstance(v, list) for p in v]
    coordinates = float32([c for p in lists for c in p])
    return polygons, [len(p) // 2 for p in lists], coordinates


def assert_parsed(result: Segmentations | None, values: list[Any], **dump: Any) -> None:
    assert result is not None
    polygons, vertices, coordinates = expected_columns(values)
    assert result.polygons.tolist() == polygons
    assert result.vertices.tolist() == vertices
    assert result.coordinates.dtype == np.float32
    assert np.array_equal(result.coordinates, coordinates)
    objects = {
        i: json.dumps(v, **dump).encode() for i, v in enumerate(values) if isinstance(v, dict)
    }
    assert result.objects == objects


numbers = st.one_of(
    st.floats(-50, 700, allow_nan=False).map(lambda v: round(v, 2)),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.floats(allow_nan=False, allow_infinity=False),  # 17 digits, tiny and huge exponents
)
polygon = st.lists(numbers, max_size=12).map(lambda p: p + p[:1] if len(p) % 2 else p)
segmentation = st.one_of(
    st.lists(polygon, max_size=4),
    st.just(None),
    st.builds(lambda n: {"counts": [n, 1], "size": [1, n + 1]}, st.integers(0, 9)),
)


# The fixture only chooses the parser, which every generated input may share.
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(segmentation, max_size=24),
    st.sampled_from([None, 0, 2]),
    st.sampled_from([(",", ":"), (", ", ": ")]),
)
def test_matches_json(
    parser: str, values: list[Any], indent: int | None, separators: tuple[str, str]
) -> None:
    dump = {"indent": indent, "separators": separators}
    assert_parsed(parse(values, **dump), values, **dump)


def float32_midpoints(count: int) -> list[float]:
    """Doubles exactly halfway between two float32 neighbours, and the doubles just beside them:
    a parser whose double is one unit off in the last place rounds one of them the wrong way."""
    rng = np.random.default_rng(7)
    low = rng.uniform(-1000, 1000, count).astype(np.float32)
    high = np.nextafter(low, np.float32(np.inf))
    middle = (low.astype(np.float64) + high.astype(np.float64)) / 2
    out = []
    for m in middle.tolist():
        out += [m, np.nextafter(m, -np.inf).item(), np.nextafter(m, np.inf).item()]
    return out


def test_exact_at_float32_halfway_points(parser: str) -> None:
    values = float32_midpoints(3000)
    texts = [repr(v) for v in values]
    assert max(len(t.strip("-").replace(".", "")) for t in texts) >= 16  # past 2^53
    result = parse_segmentations([("[[" + ", ".join(texts) + "]]").encode()])
    assert result is not None
    assert np.array_equal(result.coordinates, float32(values))


# 19-digit decimals x whose quotient mantissa / 10^18 in 64-bit long double lies exactly halfway
# between two doubles: rounding that once more to double gives the wrong double, and one whose
# float32 differs (found by searching near float32 halfway points; checked below).
DOUBLE_ROUNDING_TRAPS = [
    "2.488593459129333274",
    "4.907696962356567827",
    "3.464816451072692649",
    "8.636610507965088779",
    "7.181554079055786577",
    "4.373625516891479048",
    "6.353768587112427202",
    "4.810312986373900923",
    "3.161239027976989524",
    "2.395274519920348899",
    "1.291427314281463512",
    "9.850850582122801846",
]


def rounded(x: Fraction, bits: int) -> Fraction:
    """``x`` (positive) rounded to ``bits`` significant bits, ties to even."""
    exponent = x.numerator.bit_length() - x.denominator.bit_length()
    exponent += 1 if Fraction(2) ** exponent <= x else 0
    scale = Fraction(2) ** (bits - exponent)
    quotient, remainder = divmod((x * scale).numerator, (x * scale).denominator)
    half = Fraction(remainder, (x * scale).denominator)
    if half > Fraction(1, 2) or (half == Fraction(1, 2) and quotient % 2):
        quotient += 1
    return quotient / scale


@pytest.mark.parametrize("text", DOUBLE_ROUNDING_TRAPS)
def test_double_rounding_traps_are_traps(text: str) -> None:
    exact = Fraction(text)
    twice = float(rounded(rounded(exact, 64), 53))
    assert rounded(exact, 64) != exact
    assert np.float32(twice) != np.float32(float(exact)) and math.isfinite(twice)


def test_double_rounding_traps_are_read_exactly(parser: str) -> None:
    text = "[[" + ", ".join(DOUBLE_ROUNDING_TRAPS) + "]]"
    result = parse_segmentations([text.encode()])
    assert result is not None
    assert np.array_equal(result.coordinates, float32([float(t) for t in DOUBLE_ROUNDING_TRAPS]))


@pytest.mark.parametrize(
    "text",
    [
        "0.30000000000000004",  # 17 digits
        "123456789012345678",  # 18 digits, beyond 2^53
        "-0.0",
        "1e-30",  # beyond the powers of ten that are exact
        "1.5E+25",
        "4e-320",  # a subnormal double
        "1.7976931348623157e308",
        "0.100000000000000000000000000001",  # more digits than 64 bits hold
        "12345678901234567890123.5",
        "1234567890.1234567890123",
        "9007199254740993",  # 2^53 + 1
    ],
)
def test_any_number_is_read_as_json_does(parser: str, text: str) -> None:
    texts = [b"[[1.5, 2]]", f"[[{text}, 1], [3, 4]]".encode(), b"null", b"[[5, 6]]"]
    result = parse_segmentations(texts)
    assert result is not None
    assert result.polygons.tolist() == [1, 2, NULL, 1]
    assert result.vertices.tolist() == [1, 1, 1, 1]
    expected = float32([1.5, 2, float(text), 1, 3, 4, 5, 6])
    assert np.array_equal(result.coordinates, expected)
    assert np.signbit(result.coordinates[2]) == text.startswith("-")


@pytest.mark.parametrize(
    "text",
    [
        "1",  # a number, not a segmentation
        '"[[1, 2]]"',  # a string
        "true",
        "[1, 2]",  # a polygon, not a list of polygons
        "[[[1, 2]]]",  # too deep
        "[[1, 2, 3]]",  # odd number of coordinates
        "[[1], [2]]",  # odd counts that add up to an even one
        '[["1", 2]]',
        '[[1, "a,b"]]',
        '[[1, "[2"]]',
        "[[true, 1]]",
        "[[null, 1]]",
        '[{"x": [1, 2]}]',
        "[[1, [2, 3], 4]]",
        "[[1e400, 2]]",  # beyond float64
        "[[1, 2], 3, 4]",  # numbers beside the polygons
        "[3, 4, [1, 2]]",
    ],
)
def test_refuses_what_is_not_a_segmentation(parser: str, text: str) -> None:
    assert parse_segmentations([b"[[1, 2]]", text.encode()]) is None


def test_blocks_agree_with_one_parse(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    values: list[Any] = [
        [np.round(rng.random(2 * rng.integers(0, 40)) * 640, 2).tolist()] * rng.integers(0, 3)
        for _ in range(3000)
    ]
    values[10] = [[0.1 + 0.2, 1.0]]  # 17 digits
    values[11] = [[1e-300, 2.0]]  # taken by simdjson in the compiled path
    values[12], values[13] = None, {"counts": "abc", "size": [1, 2]}
    monkeypatch.setattr(module, "_BLOCK", 4096)
    blocks = parse(values)
    monkeypatch.setattr(module, "_BLOCK", 1 << 30)
    whole = parse(values)
    assert blocks is not None and whole is not None
    for name in ("polygons", "vertices", "coordinates"):
        assert np.array_equal(getattr(blocks, name), getattr(whole, name)), name
    assert blocks.objects == whole.objects
    assert_parsed(blocks, values)


def test_the_structure_is_read_whatever_the_spacing(parser: str) -> None:
    texts = [b"[[ ]]", b"[ [1, 2] ,\n[\t] ]", b"[\n]", b'{"counts": "[[,]", "size": [1, 2]}']
    texts += [b"null", b"[[ 3 , 4 ,5,6 ]]", b"[[1e1,2E1],[3e-1,4.5e+1]]"]
    result = parse_segmentations(list(texts))
    assert result is not None
    assert result.polygons.tolist() == [1, 2, 0, OBJECT, NULL, 1, 2]
    assert result.vertices.tolist() == [0, 1, 0, 2, 1, 1]
    assert result.coordinates.tolist() == [1, 2, 3, 4, 5, 6, 10, 20, np.float32(0.3), 45]
    assert result.objects == {3: texts[3]}


def test_a_polygon_of_more_numbers_than_16_bits_count(parser: str) -> None:
    """simdjson's path counts the numbers of a polygon in 16 bits where that is exact."""
    values = [[list(range(70_002))], [[1, 2]], [list(range(65_536))]]
    assert_parsed(parse(values), values)


def test_empty_input(parser: str) -> None:
    result = parse_segmentations([])
    assert result is not None
    assert result.polygons.size == result.vertices.size == result.coordinates.size == 0


def test_the_input_list_is_emptied(parser: str) -> None:
    texts = [b"[[1, 2]]", b"[[3, 4, 5, 6], []]", b"[]"]
    result = parse_segmentations(texts)
    assert texts == []
    assert result is not None and result.polygons.tolist() == [1, 2, 0]
    assert result.vertices.tolist() == [1, 2, 0]


def compiled(texts: list[bytes]) -> tuple[int, int, list[int], list[int], list[float]]:
    """``(parsed, status, polygons, sizes, coordinates)`` straight from the C entry point."""
    library = LIBRARY.try_load()
    if library is None:
        pytest.skip("the compiled COCO parser cannot be built here (no C compiler?)")
    ffi, lib = library
    text = b"".join([*texts, b"\0"])
    lengths = np.array([len(t) for t in texts], np.int64)
    polygons, sizes = np.full(len(texts), 99, np.int64), np.zeros(16, np.int64)
    coordinates, used = np.zeros(64, np.float32), np.zeros(2, np.int64)
    status = ffi.new("int *")
    parsed = lib.fl_coco_segmentations(
        text,
        ffi.from_buffer("int64_t[]", lengths),
        len(texts),
        ffi.from_buffer("int64_t[]", polygons),
        ffi.from_buffer("int64_t[]", sizes),
        sizes.size,
        ffi.from_buffer("float[]", coordinates),
        coordinates.size,
        ffi.from_buffer("int64_t[]", used),
        status,
    )
    n_sizes, n_values = used.tolist()
    return (
        parsed,
        status[0],
        polygons[:parsed].tolist(),
        sizes[:n_sizes].tolist(),
        coordinates[:n_values].tolist(),
    )


def compiled_paths() -> int:
    library = LIBRARY.try_load()
    if library is None:
        pytest.skip("the compiled COCO parser cannot be built here (no C compiler?)")
    return exact_paths(library)


DOUBLE, LONG_DOUBLE = 1, 2  # exact_paths' bits

#: Kinds of numbers, an example of each, and the exact path that converts it in C (0: none,
#: they are always left to simdjson).
KINDS_OF_NUMBERS = [
    ("integer", "640", DOUBLE | LONG_DOUBLE),
    ("2-decimal coordinate (COCO 2017)", "312.57", DOUBLE | LONG_DOUBLE),
    ("17 digits (Python's repr)", repr(0.1 + 0.2), LONG_DOUBLE),
    ("19 digits", "1.234567890123456789", LONG_DOUBLE),
    ("power of ten beyond 27", "1e-30", 0),
    ("more than 19 digits", "0.100000000000000000000000000001", 0),
]


@pytest.mark.parametrize(("kind", "text", "paths"), KINDS_OF_NUMBERS)
def test_which_parser_each_kind_of_number_takes_here(kind: str, text: str, paths: int) -> None:
    here = compiled_paths()
    parsed, status, polygons, _, coordinates = compiled([f"[[{text}, 2]]".encode()])
    taken = "compiled" if polygons == [1] else "simdjson"
    expected = "compiled" if here & paths else "simdjson"
    assert (parsed, status) == (1, 0)
    assert taken == expected, f"{kind} ({text}) on {platform.machine()}: {taken}"
    if taken == "compiled":
        assert coordinates == [float(np.float32(float(text))), 2.0]


def test_the_compiled_paths_are_on_where_they_are_exact() -> None:
    # x86-64 evaluates double in SSE2 (FLT_EVAL_METHOD 0, or 16 with AVX512-FP16) and has a
    # 64-bit long double; AArch64 evaluates double in double (its long double is 128-bit).
    here = compiled_paths()
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        assert here == DOUBLE | LONG_DOUBLE, "a compiled path is off on this x86-64 machine"
    elif machine in ("aarch64", "arm64"):
        assert here & DOUBLE, "the double path is off on this AArch64 machine"
    else:
        pytest.skip(f"no expectation for {machine}: exact paths {here:#b}")


def gcc_macros(*flags: str) -> dict[str, str]:
    """The macros gcc defines for feedline_coco.c with ``flags`` (preprocessing only, so the
    target need not be this CPU); skips where gcc or the flags are not there."""
    gcc = shutil.which("gcc")
    if gcc is None or platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("needs gcc targeting x86-64")
    source = Path(module.__file__).with_name("feedline_coco.c")
    done = subprocess.run(
        [gcc, *flags, "-E", "-dM", f"-I{source.parent}", str(source)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"gcc does not take {flags}: {done.stderr.strip()}")
    return dict(line.split(" ", 2)[1:] for line in done.stdout.splitlines() if line.count(" ") >= 2)


@pytest.mark.parametrize(
    ("flags", "eval_method", "paths"),
    [
        (("-march=x86-64",), "0", (1, 1)),
        (("-march=x86-64-v3",), "0", (1, 1)),
        (("-march=sapphirerapids",), "16", (1, 1)),  # AVX512-FP16: _Float16 in float
        (("-mfpmath=387",), "2", (0, 1)),  # double evaluated in long double
    ],
)
def test_the_exactness_checks_follow_the_evaluation_method(
    flags: tuple[str, ...], eval_method: str, paths: tuple[int, int]
) -> None:
    macros = gcc_macros(*flags)
    if macros["__FLT_EVAL_METHOD__"] != eval_method:
        pytest.skip(f"this gcc gives FLT_EVAL_METHOD {macros['__FLT_EVAL_METHOD__']} for {flags}")
    found = (int(macros["FL_COCO_DOUBLE_PATH"]), int(macros["FL_COCO_LONG_DOUBLE_PATH"]))
    assert found == paths


def test_compiled_parser_converts_17_digit_numbers_itself() -> None:
    if not compiled_paths() & LONG_DOUBLE:
        pytest.skip("no 64-bit long double path here")
    value = 0.1 + 0.2
    parsed, status, polygons, sizes, coordinates = compiled([f"[[{value!r}, 2]]".encode()])
    assert (parsed, status, polygons, sizes) == (1, 0, [1], [2])
    assert coordinates == [struct.unpack("f", struct.pack("f", value))[0], 2.0]


def test_compiled_parser_skips_what_it_cannot_convert() -> None:
    texts = [b"[[1, 2]]", b"[[3, 4], [1e-300, 5]]", b"[[6, 7]]"]
    parsed, status, polygons, sizes, coordinates = compiled(texts)
    # Nothing of the second segmentation is written, not even its first polygon.
    assert (parsed, status, polygons) == (3, 0, [1, -3, 1])
    assert (sizes, coordinates) == ([2, 2], [1.0, 2.0, 6.0, 7.0])


def test_skipped_segmentations_are_parsed_together_in_their_places(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    general = module._general
    monkeypatch.setattr(
        module,
        "_general",
        lambda p, run, lengths: calls.append(len(run)) or general(p, run, lengths),
    )
    rng = np.random.default_rng(3)
    values: list[Any] = []
    for k in range(400):
        polygon = np.round(rng.random(2 * int(rng.integers(1, 6))) * 640, 2).tolist()
        if k % 3 == 0:
            polygon[-1] = 1e-300  # not converted in C
        values.append([polygon] * int(rng.integers(0, 3)) if k % 7 else None)
    assert_parsed(parse(values), values)
    assert len(calls) == 1  # one simdjson parse for the whole block


def test_compiled_parser_never_reads_past_a_segmentation() -> None:
    # The first segmentation's text ends inside a number; the bytes after it must not count.
    parsed, status, *_ = compiled([b"[[1, 2", b"3]]"])
    assert (parsed, status) == (0, 1)


def test_compiled_parser_reports_a_full_output() -> None:
    parsed, status, *_ = compiled([b"[" + b", ".join([b"[1, 2]"] * 17) + b"]"])
    assert (parsed, status) == (0, 3)


def test_after_a_block_of_mostly_skipped_segmentations_simdjson_parses_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled_paths()  # skips without the compiled parser
    blocks: list[int] = []
    compiled_run = module._compiled
    monkeypatch.setattr(module, "_compiled", lambda *a: blocks.append(1) or compiled_run(*a))
    monkeypatch.setattr(module, "_BLOCK", 2048)
    # More than 19 digits: no exact path converts these, on any machine.
    values: list[Any] = [[[0.1234567890123456789012, float(k)]] for k in range(600)]
    texts = [f"[[0.1234567890123456789012, {k}.0]]".encode() for k in range(600)]
    result = parse_segmentations(texts)
    assert len(blocks) == 1  # the first block only: its segmentations were all skipped
    assert_parsed(result, values)
