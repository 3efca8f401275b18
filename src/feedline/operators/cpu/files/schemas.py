"""Family ``files``: schemas and registration of ``io.file.read`` and ``decoders.numpy``, with
DALI's arguments. Kernels (imported on first use): :mod:`.kernels`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["DECODERS_NUMPY", "FILE_READ", "KERNELS", "SCHEMAS", "feedline_register_operators"]

_KERNELS = "feedline.operators.cpu.files.kernels"

FILE_READ = OpSchema(
    name="io.file.read",
    doc=(
        "Reads the raw contents of files named by 1-D byte arrays (UTF-8 paths, uint8 or "
        "int8), as uint8. Make a path input with "
        "``np.frombuffer(path.encode('utf-8'), dtype=np.uint8)``. A file that cannot be opened "
        "is an error naming it."
    ),
    inputs=(InputSpec("filepaths", "File paths, 1-D uint8 or int8 (UTF-8)."),),
    args=(
        ArgSpec(
            "dont_use_mmap",
            "bool",
            False,
            "Read with plain file I/O instead of mapping the file into memory.",
        ),
        ArgSpec(
            "use_o_direct",
            "bool",
            False,
            "Bypass the page cache (``O_DIRECT``); not supported here: True is refused.",
        ),
    ),
    random=False,
)

DECODERS_NUMPY = OpSchema(
    name="decoders.numpy",
    doc=(
        "Decodes NumPy arrays from serialized ``.npy`` data (1-D uint8), keeping their shape "
        "and type (``dtype`` converts). C- and Fortran-ordered arrays are accepted; object, "
        "structured and complex arrays and headers other than format 1.0 are refused."
    ),
    inputs=(InputSpec("data", "The bytes of a ``.npy`` file, 1-D uint8."),),
    args=(ArgSpec("dtype", "dtype", None, "Output type; default: the array's own."),),
    random=False,
)

SCHEMAS = (FILE_READ, DECODERS_NUMPY)
KERNELS = {
    "io.file.read": f"{_KERNELS}:FileReadKernel",
    "decoders.numpy": f"{_KERNELS}:NumpyDecodeKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the file operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
