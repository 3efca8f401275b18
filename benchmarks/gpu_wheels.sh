#!/usr/bin/env bash
# Builds the wheel folder that benchmarks/gpu_check.sh installs from on a device machine that has
# no package registry. That machine already has Python 3.12, CUDA 13, nvcc, CuPy 14 for CUDA 13,
# PyTorch, NumPy, Pillow, pluggy, pytest, hypothesis and tqdm; the folder holds the rest of
# feedline's dependencies, nvImageCodec for CUDA 13 with nvjpeg (in case the toolkit's is not on
# the library path), and setuptools to install feedline from the working tree there (editable).
# Binary wheels only, for CPython 3.12 on manylinux x86-64.
#
# Usage: benchmarks/gpu_wheels.sh [FOLDER]   (default: gpu-wheels, ignored by git)
# The folder must stay under 64 MiB (what the device tool's `carry` takes); the script fails
# if it does not.
set -euo pipefail

cd "$(dirname "$0")/.."
folder="${1:-gpu-wheels}"
python="${PYTHON:-python3}"
limit_mib=64

rm -rf "$folder"
mkdir -p "$folder"
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --abi cp312 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 \
    --dest "$folder" \
    "cffi>=1.16" "pycparser" "msgspec>=0.18" "pysimdjson>=6.0" "simplejpeg>=1.7" \
    "pycocotools>=2.0.7" "nvidia-nvimgcodec-cu13" "nvidia-nvjpeg>=13,<14" "setuptools>=68"

size_mib=$(du -sm "$folder" | cut -f1)
ls -1 "$folder"
echo "$folder: ${size_mib} MiB"
if [ "$size_mib" -ge "$limit_mib" ]; then
    echo "gpu_wheels.sh: $folder is ${size_mib} MiB, over the ${limit_mib} MiB carry limit" >&2
    exit 1
fi
