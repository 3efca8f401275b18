"""Schema validation, deprecated aliases, generated docs and signatures."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from feedline import types
from feedline.core.schema import ArgSpec, ArgumentRankError, InputSpec, OpSchema

SCHEMA = OpSchema(
    "demo.resize",
    "Resize things.\n\nLonger description.",
    inputs=(InputSpec("images", "The images.", layouts=("HWC", "CHW")),),
    args=(
        ArgSpec("size", "float_vec", None, "Target size.", tensor=True),
        ArgSpec("interp_type", "interp", types.INTERP_LINEAR, "Interpolation."),
        ArgSpec("antialias", "bool", True, "Antialias."),
        ArgSpec("mode", "str", "default", "Mode.", choices=("default", "stretch")),
        ArgSpec("dtype", "dtype", None, "Output type."),
        ArgSpec("max_size", "int", None, "Limit."),
    ),
    deprecated={"resize_size": "size"},
)


def test_validate_fills_defaults_and_normalises() -> None:
    static, tensor = SCHEMA.validate({"size": 224, "dtype": types.FLOAT})
    assert static["size"] == (224.0,) and static["antialias"] is True
    assert static["interp_type"] is types.INTERP_LINEAR and tensor == {}
    static, _ = SCHEMA.validate({"size": [1, 2.5]})
    assert static["size"] == (1.0, 2.5)


def test_none_means_the_argument_is_not_given() -> None:
    static, _ = SCHEMA.validate({"antialias": None, "mode": None, "size": None})
    assert static["antialias"] is True and static["mode"] == "default" and static["size"] is None
    required = OpSchema("demo.req", "Needs n.", args=(ArgSpec("n", "int", doc="N."),))
    with pytest.raises(TypeError, match="missing required argument 'n'"):
        required.validate({"n": None})


def test_a_missing_required_argument_is_also_dalis_runtime_error() -> None:
    required = OpSchema("demo.req", "Needs n.", args=(ArgSpec("n", "int", doc="N."),))
    with pytest.raises(
        RuntimeError, match='not all required arguments were specified for op "demo.req"'
    ):
        required.validate({})


def test_a_scalar_constant_argument_is_its_value() -> None:
    static, tensor = SCHEMA.validate({"max_size": types.ScalarConstant(7), "size": 3})
    assert static["max_size"] == 7 and not tensor


def test_unknown_argument_suggests_closest() -> None:
    with pytest.raises(TypeError, match=r"demo.resize.*'antialas'.*'antialias'"):
        SCHEMA.validate({"antialas": False})


def test_wrong_type_names_argument_expected_and_given() -> None:
    with pytest.raises(TypeError, match=r"'antialias' expects bool, got str"):
        SCHEMA.validate({"antialias": "yes"})
    with pytest.raises(TypeError, match=r"'interp_type' expects .*InterpType, got int"):
        SCHEMA.validate({"interp_type": 7})
    with pytest.raises(ValueError, match="'mode' must be one of"):
        SCHEMA.validate({"mode": "crop"})


@pytest.mark.parametrize("array", [np.ones((2, 2)), np.ones((1, 1)), np.ones(2), np.ones(1)])
def test_an_array_for_a_scalar_argument_is_refused_in_dalis_words(array: np.ndarray) -> None:
    """DALI takes the array as a tensor and fails to make it 0-D, with a RuntimeError; feedline
    refuses it when the operator is called, with an error that is both a TypeError and a
    RuntimeError and carries DALI's text."""
    expected = f"Input with dimension \\({array.ndim}\\) cannot be converted to dimension \\(0\\)"
    with pytest.raises(ArgumentRankError, match=f"'max_size': {expected}") as caught:
        SCHEMA.validate({"max_size": array})
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, RuntimeError)


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (float, r"types.FLOAT \(float32\) or types.FLOAT64"),
        (int, "types.INT32 or types.INT64"),
        (bool, "types.BOOL"),
        (str, "DataType"),
    ],
)
def test_python_types_are_refused_as_data_types(value: type, hint: str) -> None:
    # DALI refuses them too (its DALIDataType conversion raises): `float` would otherwise
    # silently mean float64, `int` int64.
    with pytest.raises(TypeError, match=rf"'dtype' got the Python type '{value.__name__}'.*{hint}"):
        SCHEMA.validate({"dtype": value})


def test_numpy_types_are_data_types() -> None:
    import numpy as np

    assert SCHEMA.validate({"dtype": np.float32})[0]["dtype"] is types.FLOAT
    assert SCHEMA.validate({"dtype": np.dtype("int64")})[0]["dtype"] is types.INT64
    assert SCHEMA.validate({"dtype": np.bool_})[0]["dtype"] is types.BOOL


def test_deprecated_alias_renamed_and_conflict() -> None:
    with pytest.warns(DeprecationWarning, match="resize_size"):
        static, _ = SCHEMA.validate({"resize_size": 10})
    assert static["size"] == (10.0,)
    with pytest.raises(TypeError, match="unexpected 'resize_size' deprecated argument when 'size'"):
        SCHEMA.validate({"resize_size": 10, "size": 3})


def test_deprecation_texts_are_dalis() -> None:
    schema = OpSchema(
        "op",
        "",
        args=(ArgSpec("size", "int", 0, "S."),),
        deprecated={"old": "size"},
        removed=("gone",),
    )
    with pytest.warns(DeprecationWarning) as caught:
        static, _ = schema.validate({"old": 3, "gone": "anything"})
    assert static == {"size": 3}  # the removed argument is dropped, whatever its value
    assert [str(w.message) for w in caught] == [
        "The argument `old` is a deprecated alias for `size`. Use `size` instead.",
        "The argument `gone` is no longer used and will be removed in a future release.",
    ]
    assert "gone" in schema.closest("gones")
    assert "No longer used (ignored, with a warning): gone." in schema.docstring()


def test_required_and_tensor_arguments() -> None:
    schema = OpSchema(
        "req", "Needs x.", args=(ArgSpec("x", "int", doc="X."), ArgSpec("y", "int", 0, "Y."))
    )
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        schema.validate({})
    node = object()
    with pytest.raises(TypeError, match="'y' cannot be given per sample"):
        schema.validate({"x": 1, "y": node}, is_node=lambda v: v is node)
    _, tensor = SCHEMA.validate({"size": node}, is_node=lambda v: v is node)
    assert tensor == {"size": node}


def test_docstring_and_signature() -> None:
    doc = SCHEMA.docstring({"cpu": "image", "gpu": "gpu-kernels"})
    assert doc.startswith("Resize things.")
    assert "Supported devices: ``cpu`` (image), ``gpu`` (gpu-kernels)." in doc
    assert "where to run it, one of cpu, gpu." in doc
    assert "Supported devices" not in SCHEMA.docstring()
    assert "images (TensorList): The images. Layouts: 'HWC', 'CHW'." in doc
    assert "size (float or list of float or TensorList, default None)" in doc
    assert "interp_type (feedline.types.InterpType, default types.INTERP_LINEAR)" in doc
    assert "resize_size → size" in doc
    signature = SCHEMA.signature()
    assert list(signature.parameters)[:2] == ["images", "size"]
    assert signature.parameters["images"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert signature.parameters["antialias"].default is True


def test_schema_definition_errors() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        ArgSpec("x", "complex")
    with pytest.raises(ValueError, match="twice"):
        OpSchema("d", "", args=(ArgSpec("a", "int", 0), ArgSpec("a", "int", 0)))
    with pytest.raises(ValueError, match="implicit"):
        OpSchema("d", "", args=(ArgSpec("seed", "int", 0),))
    with pytest.raises(ValueError, match="unknown"):
        OpSchema("d", "", deprecated={"old": "new"})
    with pytest.raises(TypeError, match="expected 1 input"):
        SCHEMA.check_num_inputs(2)


def test_bool_values_for_integer_arguments_as_dali_takes_them() -> None:
    spec = ArgSpec("horizontal", "int", 0)
    assert spec.coerce(True, "flip") == 1 and type(spec.coerce(True, "flip")) is int
    assert ArgSpec("axes", "int_vec", None).coerce([True, False], "op") == (1, 0)
    with pytest.raises(TypeError, match="expects int"):
        spec.coerce(0.5, "flip")


def positive_depth(args: dict) -> None:
    if args["depth"] is not None and args["depth"] < 1:
        raise ValueError("depth must be positive")


SOURCE_SCHEMA = OpSchema(
    "source_op",
    "Takes its source positionally.",
    args=(ArgSpec("source", "any", None), ArgSpec("depth", "int", None)),
    positional_args=("source",),
    check=positive_depth,
)


def test_positional_arguments_bind_before_validation() -> None:
    inputs, kwargs = SOURCE_SCHEMA.bind_positional(["data"], {"depth": 2})
    assert inputs == () and kwargs == {"source": "data", "depth": 2}
    with pytest.raises(TypeError, match="multiple values for argument 'source'"):
        SOURCE_SCHEMA.bind_positional(["data"], {"source": "again"})
    with pytest.raises(TypeError, match="at most 1 positional"):
        SOURCE_SCHEMA.bind_positional(["a", "b"], {})
    parameter = SOURCE_SCHEMA.signature().parameters["source"]
    assert parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    with pytest.raises(ValueError, match="without inputs"):
        OpSchema(
            "d", "", inputs=(InputSpec("x"),), args=SOURCE_SCHEMA.args, positional_args=("source",)
        )


def test_check_runs_on_the_validated_arguments() -> None:
    assert SOURCE_SCHEMA.validate({"depth": 3})[0] == {"source": None, "depth": 3}
    with pytest.raises(ValueError, match="depth"):
        SOURCE_SCHEMA.validate({"depth": -1})


def test_paths_for_string_arguments_and_none_for_the_default() -> None:
    assert ArgSpec("file_root", "str", "").coerce(Path("/data/images"), "readers.file") == (
        "/data/images"
    )
    assert ArgSpec("files", "str_vec", None).coerce([Path("a"), "b"], "readers.file") == ("a", "b")
    assert ArgSpec("brightness", "float", 1.0).coerce(True, "brightness") == 1.0
    static, _ = SCHEMA.validate({"size": None, "interp_type": None})
    assert static["interp_type"] is types.INTERP_LINEAR
    assert static["size"] is None


def test_layouts_keep_one_string_apart_from_a_list_of_one() -> None:
    spec = ArgSpec("output_layouts", "layouts", None)
    assert spec.coerce("HWC", "op") == "HWC"
    assert spec.coerce(["HWC"], "op") == ("HWC",)
    assert spec.coerce(("HW", ""), "op") == ("HW", "")
    with pytest.raises(TypeError, match="expects layout str or list of layout str"):
        spec.coerce(3, "op")
    with pytest.raises(ValueError, match="twice"):
        spec.coerce(["HH"], "op")


def test_an_unknown_argument_is_a_type_error_and_dalis_key_error() -> None:
    from feedline import fn, ops
    from feedline.core.schema import UnknownArgumentError

    with pytest.raises(KeyError) as raised:
        fn.readers.coco(
            file_root="/x", annotations_file="/y.json", preprocessed_annotations_dir="/t"
        )
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, UnknownArgumentError)
    message = str(raised.value)
    assert message.startswith(
        'Argument "preprocessed_annotations_dir" is not defined for operator "readers__COCO"'
    )
    assert "'preprocessed_annotations'" in message  # the closest names are suggested
    with pytest.raises(TypeError, match='Argument "mirrror" is not defined for operator "Flip"'):
        ops.Flip(mirrror=1)
