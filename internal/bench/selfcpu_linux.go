package bench

import (
	"syscall"
	"time"
)

// selfCPU is the CPU time (user and system) of this whole process: the
// store's writer runs the measured transactions on a goroutine of its
// own, so no one thread's clock would see them.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
