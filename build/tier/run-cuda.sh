#!/bin/sh
# kvshare's CUDA tier: gpuroundtrip's TestCUDA* tests, from a test binary
# built by "KVSHARE_CUDA_BUILD=<dir> go run mage.go cuda". Needs an NVIDIA
# GPU, its driver and the CUDA runtime (libcudart.so, .so.13 or .so.12 on
# the loader's path, or KVSHARE_CUDART=/path/to/it); the binary is built
# with NVML (libnvidia-ml.so.1, from the driver) to name the device.
# KVSHARE_CUDA_DEVICE picks the device (default 0). Extra arguments go to
# the test binary (e.g. -test.run '^TestCUDAScenarios$').
cd "$(dirname "$0")" || exit 1
KVSHARE_CUDA=1 exec ./gpuroundtrip.test -test.v -test.count=1 -test.timeout=9m -test.run '^TestCUDA' "$@"
