"""Family ``files``: schemas and registration of ``io.file.read``, ``decoders.numpy``,
``decoders.inflate`` and ``dump_image``, with DALI's arguments. Kernels (imported on first use):
:mod:`.kernels`, :mod:`.inflate`, :mod:`.dump`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "DECODERS_INFLATE",
    "DECODERS_NUMPY",
    "DUMP_IMAGE",
    "FILE_READ",
    "KERNELS",
    "SCHEMAS",
    "feedline_register_operators",
]

_KERNELS = "feedline.operators.cpu.files"

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

DECODERS_INFLATE = OpSchema(
    name="decoders.inflate",
    doc=(
        "Decompresses LZ4 blocks (raw LZ4 block format, no frame header) into tensors of "
        "``shape`` and ``dtype``; a CPU kernel (DALI has only a GPU one). Needs the ``lz4`` "
        "package: ``pip install feedline[lz4]``.\n\n"
        "A sample is one compressed chunk, or several (given by ``chunk_offsets`` and/or "
        "``chunk_sizes``; with one of them the chunks are taken as densely packed) that each "
        "inflate to ``shape``; they are stacked along a new outer axis named "
        "``sequence_axis_name``. A chunk that does not inflate to exactly ``shape`` is an "
        "error."
    ),
    inputs=(InputSpec("input", "Compressed bytes, 1-D uint8."),),
    args=(
        ArgSpec("algorithm", "str", "LZ4", "Decompression algorithm (only LZ4).", choices=("LZ4",)),
        ArgSpec("shape", "int_vec", None, "Shape of one inflated chunk (required).", True),
        ArgSpec("dtype", "dtype", DataType.UINT8, "Type of the inflated data."),
        ArgSpec("chunk_offsets", "int_vec", None, "Where the chunks begin in a sample.", True),
        ArgSpec("chunk_sizes", "int_vec", None, "Sizes of the compressed chunks.", True),
        ArgSpec("layout", "layout", "", "Layout of one inflated chunk."),
        ArgSpec("sequence_axis_name", "layout", "F", "Name of the chunk axis (several chunks)."),
        ArgSpec(
            "check_output_size",
            "bool",
            False,
            "Validate the output size first (the CPU kernel always checks it).",
        ),
    ),
    random=False,
)

DUMP_IMAGE = OpSchema(
    name="dump_image",
    doc=(
        "Writes each image of the batch to the working directory as an ASCII Netpbm file and "
        "passes the input through unchanged (for debugging).\n\n"
        "Sample ``i`` goes to ``{i}-{suffix}-0.ppm``, DALI's name, rewritten every iteration: "
        "``P3`` (colour) for 3 channels, ``P2`` (grey) for 1. Inputs are uint8 ``HWC`` images; "
        "other shapes, channel counts and types are errors naming the sample."
    ),
    inputs=(InputSpec("input", "uint8 images, HWC with 1 or 3 channels."),),
    args=(
        ArgSpec(
            "input_layout",
            "layout",
            "HWC",
            "Layout of the images; only HWC is supported (as in DALI).",
        ),
        ArgSpec("suffix", "str", "", "Put between the sample index and the ``-0.ppm`` ending."),
    ),
    random=False,
)

SCHEMAS = (FILE_READ, DECODERS_NUMPY, DECODERS_INFLATE, DUMP_IMAGE)
KERNELS = {
    "io.file.read": f"{_KERNELS}.kernels:FileReadKernel",
    "decoders.numpy": f"{_KERNELS}.kernels:NumpyDecodeKernel",
    "decoders.inflate": f"{_KERNELS}.inflate:InflateKernel",
    "dump_image": f"{_KERNELS}.dump:DumpImageKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the file operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
