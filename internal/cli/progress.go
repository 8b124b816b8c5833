package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressEvery is how often a progress line is written when stderr is
// not a terminal (a cron job's log, a Kubernetes pod's).
const progressEvery = 10 * time.Second

// Progress shows a long run's progress on stderr: a bar redrawn in place
// on a terminal, a line every progressEvery elsewhere. --progress
// auto|always|never: auto is a bar on a terminal and lines elsewhere;
// always writes lines even on a terminal (for a terminal that is being
// recorded); never writes nothing.
type Progress struct {
	w     io.Writer
	bar   bool
	mu    sync.Mutex
	drawn bool
	last  time.Time
	lined bool // a line was written: the final one is written too
	now   func() time.Time
}

// ProgressFlag registers --progress.
func (fs *FlagSet) ProgressFlag() *string {
	return fs.String("progress", "auto", "progress on stderr: auto (a bar on a terminal, a line every 10s otherwise), always (lines), never")
}

// NewProgress returns the progress of mode, or nil when nothing is to be
// shown (never); a nil progress ignores every call.
func NewProgress(e *Env, mode string) (*Progress, error) {
	switch mode {
	case "never":
		return nil, nil
	case "auto":
		return &Progress{w: e.Stderr, bar: isTerminal(e.Stderr), now: time.Now}, nil
	case "always":
		return &Progress{w: e.Stderr, now: time.Now}, nil
	}
	return nil, Usagef("--progress %q: use auto, always or never", mode)
}

// Show displays line: redrawn on a terminal; written as a line when
// progressEvery has passed since the last, and the final line whatever the
// time once any line was written (a run shorter than progressEvery writes
// none).
func (p *Progress) Show(line string, final bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.drawn = true
		return
	}
	now := p.now()
	if final && !p.lined {
		return
	}
	if !final && (p.last.IsZero() || now.Sub(p.last) < progressEvery) {
		if p.last.IsZero() {
			p.last = now // the first line comes after progressEvery, not at once
		}
		return
	}
	p.last, p.lined = now, true
	fmt.Fprintf(p.w, "%s %s\n", now.UTC().Format("2006-01-02T15:04:05Z"), line)
}

// Clear removes the bar from the terminal before the command's own
// messages.
func (p *Progress) Clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Meter draws a fraction as "[######..................]  25%".
func Meter(frac float64) string {
	const width = 24
	frac = max(min(frac, 1), 0)
	fill := int(frac * width)
	return fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", fill), strings.Repeat(".", width-fill), frac*100)
}
