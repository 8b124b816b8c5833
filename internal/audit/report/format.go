package report

import (
	"time"

	"github.com/keyguard/keyguard/internal/human"
)

func fmtDur(d time.Duration) string { return human.Duration(d) }

func fmtBytes(n int64) string { return human.Bytes(n) }

func fmtCount(n int64) string { return human.Count(n) }

func secDur(s int64) time.Duration { return time.Duration(s) * time.Second }
func msDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func fmtApprox(d time.Duration) string { return human.Approx(d) }
