//go:build !linux

package bench

import "time"

// selfCPU is not measured off Linux.
func selfCPU() (time.Duration, bool) { return 0, false }
