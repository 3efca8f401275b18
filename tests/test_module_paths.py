"""DALI's module paths: ``nvidia.dali.X`` becomes ``feedline.X`` by one rename rule, and every
facade re-exports the one implementation without loading plugins, CuPy or frameworks."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import feedline
from feedline.core.graph import DataNode
from feedline.core.pipeline import Pipeline, pipeline_def
from feedline.core.pipeline.conditionals import do_not_convert
from feedline.core.tensor import TensorCPU, TensorListCPU
from feedline.core.tensor_gpu import TensorGPU, TensorListGPU


def port(source: str) -> str:
    """The rename rule the porting guide gives: ``nvidia.dali`` → ``feedline``."""
    return re.sub(r"\bnvidia\.dali\b", "feedline", source)


DALI_STYLE_PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    import nvidia.dali.math as dmath
    import nvidia.dali.tensors as tensors
    from nvidia.dali import newaxis
    from nvidia.dali.backend import TensorListCPU
    from nvidia.dali.data_node import DataNode
    from nvidia.dali.pipeline import Pipeline
    from nvidia.dali.pipeline.experimental import pipeline_def

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data = fn.external_source(
            source=lambda: [np.float32([[1, 4], [9, 16]])] * 2, layout="HW"
        )
        assert isinstance(data, DataNode)
        root = dmath.sqrt(data)[:, 1]
        return fn.cast(root, dtype=types.UINT8)[newaxis("C")]

    p = pipe()
    assert isinstance(p, Pipeline)
    p.build()
    (out,) = p.run()
    assert isinstance(out, TensorListCPU) and isinstance(out, tensors.TensorListCPU)
    result = out.as_array()
    layout = out.layout()
    """
)


def test_a_dali_style_program_runs_after_the_rename() -> None:
    ported = port(DALI_STYLE_PROGRAM)
    assert "nvidia" not in ported
    scope: dict[str, object] = {}
    exec(compile(ported, "<ported DALI program>", "exec"), scope)
    np.testing.assert_array_equal(scope["result"], np.uint8([[[2, 4]], [[2, 4]]]))
    assert scope["layout"] == "CH"


@pytest.mark.parametrize(
    ("module", "name", "implementation"),
    [
        ("feedline.pipeline", "Pipeline", Pipeline),
        ("feedline.pipeline", "pipeline_def", pipeline_def),
        ("feedline.pipeline", "DataNode", DataNode),
        ("feedline.pipeline", "do_not_convert", do_not_convert),
        ("feedline.pipeline.experimental", "pipeline_def", pipeline_def),
        ("feedline.data_node", "DataNode", DataNode),
        ("feedline.data_node", "newaxis", feedline.newaxis),
        ("feedline.tensors", "TensorCPU", TensorCPU),
        ("feedline.tensors", "TensorListCPU", TensorListCPU),
        ("feedline.tensors", "TensorGPU", TensorGPU),
        ("feedline.tensors", "TensorListGPU", TensorListGPU),
        ("feedline.backend", "TensorCPU", TensorCPU),
        ("feedline.backend", "TensorListCPU", TensorListCPU),
        ("feedline.backend", "TensorGPU", TensorGPU),
        ("feedline.backend", "TensorListGPU", TensorListGPU),
        ("feedline.backend_impl", "TensorListCPU", TensorListCPU),
        ("feedline.backend_impl", "TensorListGPU", TensorListGPU),
        ("feedline.backend_impl.types", "DALIDataType", feedline.types.DALIDataType),
        ("feedline.backend_impl.types", "_DALIDataType", feedline.types.DALIDataType),
        ("feedline.backend_impl.types", "TensorLayout", feedline.types.TensorLayout),
    ],
)
def test_facades_re_export_the_one_implementation(
    module: str, name: str, implementation: object
) -> None:
    assert getattr(importlib.import_module(module), name) is implementation


def test_backend_impl_types_holds_every_data_type_and_constant() -> None:
    from feedline.backend_impl import types as native_types

    for member in feedline.types.DALIDataType:
        assert getattr(native_types, member.name) is member
    assert native_types.RGB is feedline.types.RGB
    assert native_types.INTERP_LINEAR is feedline.types.INTERP_LINEAR


def test_types_groups_the_numeric_types_in_dali_order() -> None:
    names = [t.name for t in feedline.types._all_types]
    assert names[0] == "BOOL"
    assert names[1:9] == ["INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64"]
    assert names[9:] == ["FLOAT16", "FLOAT", "FLOAT64"]
    assert feedline.types._int_like_types == feedline.types._all_types[:9]
    for dtype in feedline.types._all_types:
        assert feedline.types.to_numpy_type(dtype) is not None


@pytest.mark.parametrize("framework", ["pytorch", "jax", "numpy"])
def test_plugin_paths_are_the_iterator_plugins(framework: str) -> None:
    facade = importlib.import_module(f"feedline.plugin.{framework}")
    plugin = importlib.import_module(f"feedline.plugins.{framework}")
    assert facade.__all__
    for name in facade.__all__:
        assert getattr(facade, name) is getattr(plugin, name)
    assert "feedline_register_iterators" not in facade.__all__


def test_facades_load_no_plugin_cupy_or_framework() -> None:
    script = textwrap.dedent(
        """
        import sys
        import feedline, feedline.plugin, feedline.backend, feedline.tensors
        import feedline.data_node, feedline.pipeline.experimental, feedline.types
        loaded = [m for m in ("cupy", "torch", "jax", "feedline.plugins.pytorch",
                              "feedline.operators", "feedline.readers") if m in sys.modules]
        print(",".join(loaded))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_plugin_manager_imports_and_refuses_native_libraries() -> None:
    from feedline import plugin_manager

    with pytest.raises(RuntimeError, match="libcustom.so.*'feedline.plugins' entry-point"):
        plugin_manager.load_library("libcustom.so")
    with pytest.raises(RuntimeError, match="plugins/"):
        plugin_manager.load_directory("plugins/")


@pytest.mark.parametrize("name", ["pipeline", "tensors", "backend", "data_node", "tfrecord"])
def test_submodules_are_attributes_of_the_package(name: str) -> None:
    script = f"import feedline; print(feedline.{name}.__name__)"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == f"feedline.{name}"


def test_the_numba_paths_reach_the_registered_operator() -> None:
    from feedline import ops
    from feedline.plugin import numba as numba_plugin
    from feedline.plugin.numba.experimental import NumbaFunction
    from feedline.plugin.numba.fn import numba_function
    from feedline.plugin.numba.fn.experimental import numba_function as older

    assert older is numba_function
    assert NumbaFunction is numba_plugin.NumbaFunction
    assert issubclass(NumbaFunction, ops.experimental.NumbaFunction)
    assert not NumbaFunction._check_cuda_compatibility(False)
    assert NumbaFunction._check_minimal_numba_version(False)
    with pytest.raises(TypeError, match="run_fn"):
        numba_function()


def test_the_numba_package_reaches_its_function_paths_as_attributes() -> None:
    # DALI's ``import nvidia.dali.plugin.numba as p; p.fn.experimental.numba_function(...)``,
    # in a fresh interpreter so no earlier test has imported the submodules
    script = textwrap.dedent(
        """
        import feedline.plugin.numba as plugin
        print(plugin.fn.experimental.numba_function is plugin.fn.numba_function)
        print(plugin.experimental.NumbaFunction is plugin.NumbaFunction)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "True"]


def test_operator_sub_namespaces_import_by_name() -> None:
    # DALI's ``import nvidia.dali.fn.transforms as T`` and ``import nvidia.dali.ops.transforms``
    script = textwrap.dedent(
        """
        import feedline.fn.transforms as T
        import feedline.fn.experimental.decoders as D
        import feedline.ops.transforms
        from feedline import fn, ops
        assert T is fn.transforms and D is fn.experimental.decoders
        assert T.rotation is fn.transforms.rotation
        print(ops.transforms.Rotation.__name__)
        for missing in ("feedline.fn.no_such_family", "feedline.fn.cast"):
            try:
                __import__(missing)
            except ModuleNotFoundError:
                print("refused", missing)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:3] == [
        "Rotation",
        "refused feedline.fn.no_such_family",
        "refused feedline.fn.cast",
    ]


def test_backend_reports_a_cuda_version_without_loading_cupy_at_import() -> None:
    script = textwrap.dedent(
        """
        import sys
        import feedline.backend as backend
        assert "cupy" not in sys.modules
        version = backend.__cuda_version__
        assert isinstance(version, int) and version >= 0
        if "cupy" not in sys.modules:
            assert version == 0
        try:
            backend.no_such_name
        except AttributeError as error:
            assert "no_such_name" in str(error)
        else:
            raise AssertionError("missing attribute not refused")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)
