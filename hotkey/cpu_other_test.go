//go:build !unix

package hotkey

import "time"

func processCPU() time.Duration { return 0 }
