//go:build !unix

package transfer

import "time"

// processCPU is not measured here: the benchmark reports 0 cpu-ns/job.
func processCPU() time.Duration { return 0 }
