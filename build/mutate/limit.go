package mutate

import "syscall"

// limitAddressSpace lowers this process's soft address-space limit to n
// bytes (children inherit it) and returns what restores the old one.
func limitAddressSpace(n uint64) (func(), error) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		return nil, err
	}
	if old.Cur <= n {
		return func() {}, nil
	}
	lim := old
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Setrlimit(syscall.RLIMIT_AS, &old) }, nil
}
