//go:build unix

package message

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the whole test process has used, user and
// system, all threads (the collector's included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
