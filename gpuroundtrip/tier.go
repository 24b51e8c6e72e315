package gpuroundtrip

import (
	"fmt"
	"os"
	"strconv"
)

// EnvCUDA turns the CUDA tier on when it is "1": the tests that move
// pages through a real GPU's memory. EnvCUDADevice picks the CUDA
// device ordinal they use (default 0).
const (
	EnvCUDA       = "KVSHARE_CUDA"
	EnvCUDADevice = "KVSHARE_CUDA_DEVICE"
)

// CUDATierOff is the one line a CUDA test skips with when the tier is
// off.
const CUDATierOff = "CUDA tier off: " + EnvCUDA + " is not 1 (set " + EnvCUDA + "=1 on a machine with an NVIDIA GPU, its driver and libcudart to run it)"

// CUDATier reads the tier's variables: on only when EnvCUDA is "1"; a
// value other than "", "0" and "1", or a bad device ordinal, is an error
// (a typo must not pass for "off").
func CUDATier() (on bool, device int, err error) {
	switch v := os.Getenv(EnvCUDA); v {
	case "", "0":
		return false, 0, nil
	case "1":
	default:
		return false, 0, fmt.Errorf("%s=%q: want 1 (on) or unset", EnvCUDA, v)
	}
	if v := os.Getenv(EnvCUDADevice); v != "" {
		device, err = strconv.Atoi(v)
		if err != nil || device < 0 {
			return true, 0, fmt.Errorf("%s=%q: want a CUDA device ordinal (0, 1, …)", EnvCUDADevice, v)
		}
	}
	return true, device, nil
}
