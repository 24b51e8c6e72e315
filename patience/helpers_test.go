package patience

import "runtime"

func numCPU() int           { return runtime.NumCPU() }
func setMaxProcs(n int) int { return runtime.GOMAXPROCS(n) }
