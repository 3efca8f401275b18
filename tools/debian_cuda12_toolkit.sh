#!/bin/sh
# Unpack Debian's CUDA 12 compiler into a folder, for building the feedline-cuda12 wheel on a
# Debian or Ubuntu x86-64 release machine that has no CUDA 12 toolkit.
#
# Usage: sh tools/debian_cuda12_toolkit.sh [PREFIX]     (default PREFIX: /opt/cuda12; run as root)
# Then:  python tools/build_cuda_wheel.py --nvcc PREFIX/bin/nvcc --out dist
#
# Debian 13 (trixie) ships NVIDIA's CUDA 12.4 toolkit in its non-free component. The packages
# are downloaded with apt-get through a private source list and package index (the machine's
# own apt configuration is left alone) and unpacked with dpkg-deb, not installed, so nothing of
# the host's libraries changes: nvidia-cuda-toolkit (nvcc, cudafe++, ptxas, fatbinary, nvlink,
# cuobjdump), libnvvm4 (cicc, libNVVM, libdevice), the headers and static runtime of
# nvidia-cuda-dev, and libcu++-dev (<nv/target>, which CUDA 12's headers include). PREFIX/bin
# gets nvcc with an nvcc.profile that points into PREFIX. The host compiler is the machine's
# gcc (CUDA 12.4 takes gcc 6 to 13).
set -eu

PREFIX=${1:-/opt/cuda12}
TOOLKIT=12.4.131~12.4.1-2
RUNTIME=12.4.127~12.4.1-2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

mkdir -p "$WORK/lists/partial" "$WORK/debs" "$PREFIX/bin"
cat > "$WORK/trixie.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
APT="-o Dir::Etc::sourcelist=$WORK/trixie.sources -o Dir::Etc::sourceparts=- \
     -o Dir::State::Lists=$WORK/lists -o APT::Get::List-Cleanup=0"
# shellcheck disable=SC2086
apt-get $APT update
cd "$WORK/debs"
# shellcheck disable=SC2086
apt-get $APT download "nvidia-cuda-toolkit=$TOOLKIT" "libnvvm4=$TOOLKIT" \
    "nvidia-cuda-dev=$RUNTIME" libcu++-dev

dpkg-deb -x nvidia-cuda-toolkit_*.deb "$PREFIX"
dpkg-deb -x libnvvm4_*.deb "$PREFIX"
dpkg-deb -x libcu++-dev_*.deb "$PREFIX"
# nvidia-cuda-dev is about 2.5 GB unpacked (every CUDA library): take the headers and the
# static runtime only.
dpkg-deb --fsys-tarfile nvidia-cuda-dev_*.deb | tar -x -C "$PREFIX" --wildcards \
    './usr/include/*' './usr/lib/x86_64-linux-gnu/libcudart_static.a' \
    './usr/lib/x86_64-linux-gnu/libcudadevrt.a' './usr/lib/x86_64-linux-gnu/libculibos.a'

# Debian's nvcc is a shell wrapper around usr/lib/nvidia-cuda-toolkit/bin/nvcc, whose profile
# names absolute /usr paths; the copy in PREFIX/bin reads the profile beside it instead.
TOOLS="$PREFIX/usr/lib/nvidia-cuda-toolkit"
cp "$TOOLS/bin/nvcc" "$TOOLS/bin/cicc" "$PREFIX/bin/"
cp -r "$TOOLS/bin/crt" "$PREFIX/bin/"
for tool in bin2c cu++filt cudafe++ cuobjdump fatbinary nvdisasm nvlink nvprune ptxas; do
    ln -sf "$PREFIX/usr/bin/$tool" "$PREFIX/bin/$tool"
done
cat > "$PREFIX/bin/nvcc.profile" <<EOF
NVVMIR_LIBRARY_DIR = $TOOLS/libdevice
PATH += \$(_HERE_):
INCLUDES += "-I$PREFIX/usr/include" \$(_SPACE_)
LIBRARIES =+ \$(_SPACE_) "-L$PREFIX/usr/lib/x86_64-linux-gnu"
EOF
"$PREFIX/bin/nvcc" --version
