//go:build !unix

package redishook

import "time"

func processCPU() time.Duration { return 0 }
