"""fn.experimental.readers.fits on FITS files written with astropy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import feedline.readers.fits as fits_plugin
from feedline import types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.testing import check_reader
from tests.readers.reader_runs import assert_thread_independent, read

fits = pytest.importorskip("astropy.io.fits", reason="the FITS reader needs astropy")


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(fits_plugin, "fits-reader")
    with use_plugin_system(system):
        yield


def arrays(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(i)
    return ((rng.random((4, 5)) * 1000).astype(np.int16), rng.random((3, 2, 2)).astype(np.float32),
            (rng.random((8, 6)) * 100).astype(np.int32))  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / "sub").mkdir()
    for i in range(4):
        a, b, c = arrays(i)
        hdus = fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(a), fits.ImageHDU(b),
                             fits.CompImageHDU(c, compression_type="RICE_1")])  # fmt: skip
        hdus.writeto(tmp_path / ("sub" if i % 2 else ".") / f"f{i}.fits")
    (tmp_path / "readme.txt").write_text("not fits")
    return str(tmp_path)


def test_hdus_as_outputs(root: str) -> None:
    (first,) = read("experimental.readers.fits", 4, file_root=root)
    order = [0, 2, 1, 3]  # file_root's own files first, then its sub-folders'
    for got, i in zip(first, order, strict=True):
        np.testing.assert_array_equal(got, arrays(i)[0])
        assert got.dtype == np.int16 and got.dtype.isnative
    _, third, fourth = read("experimental.readers.fits", 1, file_root=root,
                                 hdu_indices=[2, 3, 4])  # fmt: skip
    np.testing.assert_array_equal(third[0], arrays(0)[1])
    np.testing.assert_array_equal(fourth[0], arrays(0)[2])  # decompressed
    (typed,) = read("experimental.readers.fits", 1, file_root=root, hdu_indices=[3],
                    dtypes=[types.FLOAT])  # fmt: skip
    assert typed[0].dtype == np.float32


def test_file_list_and_files(root: str, tmp_path: Path) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text("sub/f1.fits\nf0.fits\n")
    (out,) = read("experimental.readers.fits", 2, file_list=str(listing))
    np.testing.assert_array_equal(out[0], arrays(1)[0])
    (out,) = read("experimental.readers.fits", 1, files=["f2.fits"], file_root=root)
    np.testing.assert_array_equal(out[0], arrays(2)[0])


def test_sharding_checkpoints_and_threads(root: str) -> None:
    assert check_reader("experimental.readers.fits", {"file_root": root})
    assert_thread_independent("experimental.readers.fits", 3, file_root=root)


def test_errors_name_the_file(root: str, tmp_path: Path) -> None:
    with pytest.raises(OperatorError, match=r"f0\.fits.*int16.*float32"):
        read("experimental.readers.fits", 1, file_root=root, dtypes=[types.FLOAT])
    with pytest.raises(OperatorError, match=r"HDU 9 does not exist"):
        read("experimental.readers.fits", 1, file_root=root, hdu_indices=[9])
    broken = tmp_path / "broken.fits"
    broken.write_bytes(b"SIMPLE  = nonsense" + bytes(100))
    with pytest.raises(OperatorError, match=r"broken\.fits"):
        read("experimental.readers.fits", 1, files=[str(broken)])
    with pytest.raises((ValueError, OperatorError), match="one type per HDU"):
        read("experimental.readers.fits", 1, file_root=root, dtypes=[types.INT16, types.FLOAT])
