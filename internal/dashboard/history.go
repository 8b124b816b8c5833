package dashboard

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/keyguard/keyguard/internal/atomicfile"
)

// History is the bounded record of past audits: in memory a Point per
// audit (totals per domain and template, for the trend lines), and, when
// it has a directory, each audit's whole report as one JSON file, the
// newest max kept, so that a restart keeps the history.
type History struct {
	mu     sync.RWMutex
	max    int
	dir    string
	points []Point // oldest first
	names  map[string]string
	log    *slog.Logger
}

// History file names: report-<start>.json, the start in UTC to the
// millisecond, so that names sort as time does.
const (
	historyPrefix = "report-"
	historySuffix = ".json"
	historyLayout = "20060102T150405.000Z"
)

func historyName(at time.Time) string {
	return historyPrefix + at.UTC().Format(historyLayout) + historySuffix
}

// historyTime reads the time a history file name carries.
func historyTime(name string) (time.Time, bool) {
	s, ok := strings.CutPrefix(name, historyPrefix)
	if !ok {
		return time.Time{}, false
	}
	if s, ok = strings.CutSuffix(s, historySuffix); !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(historyLayout, s)
	return t, err == nil && historyName(t) == name
}

// openHistory returns a history of at most max audits. With a directory
// it creates the directory, reads the reports in it (the newest max;
// older ones are deleted) and returns the newest whole, so the dashboard
// starts where it stopped. A file that cannot be read is logged and
// skipped.
func openHistory(dir string, max int, log *slog.Logger) (*History, *Report, error) {
	h := &History{max: max, dir: dir, names: map[string]string{}, log: log}
	if dir == "" {
		return h, nil, nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("history directory: %w\n\tTry: pass --history-dir a directory keyguard may write", err)
	}
	names, err := h.files()
	if err != nil {
		return nil, nil, err
	}
	h.trimFiles(names)
	if len(names) > max {
		names = names[len(names)-max:]
	}
	var latest *Report
	for i, name := range names {
		path := filepath.Join(dir, name)
		if i == len(names)-1 {
			rep, err := readReportFile(path)
			if err != nil {
				log.Warn("history: skipped an unreadable report", "file", path, "err", err)
				continue
			}
			latest = rep
			h.points = append(h.points, h.intern(pointOf(rep)))
			continue
		}
		p, err := readPointFile(path)
		if err != nil {
			log.Warn("history: skipped an unreadable report", "file", path, "err", err)
			continue
		}
		h.points = append(h.points, h.intern(p))
	}
	return h, latest, nil
}

// files lists the history files in the directory, oldest first.
func (h *History) files() ([]string, error) {
	ents, err := os.ReadDir(h.dir)
	if err != nil {
		return nil, fmt.Errorf("history directory: %w", err)
	}
	var names []string
	for _, e := range ents {
		if _, ok := historyTime(e.Name()); ok && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// trimFiles deletes all but the newest max of names.
func (h *History) trimFiles(names []string) {
	for len(names) > h.max {
		if err := os.Remove(filepath.Join(h.dir, names[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			h.log.Warn("history: could not delete an old report", "file", names[0], "err", err)
		}
		names = names[1:]
	}
}

// add records rep: its point in memory and, with a directory, the report
// written to a file (whole or not at all). The oldest audits beyond max
// are dropped. A write error is returned after the point is kept.
func (h *History) add(rep *Report) error {
	p := pointOf(rep)
	var werr error
	if h.dir != "" {
		werr = h.write(rep)
	}
	h.mu.Lock()
	h.points = append(h.points, h.intern(p))
	if n := len(h.points) - h.max; n > 0 {
		h.points = slices.Delete(h.points, 0, n)
	}
	h.mu.Unlock()
	if h.dir != "" {
		if names, err := h.files(); err == nil {
			h.trimFiles(names)
		}
	}
	return werr
}

func (h *History) write(rep *Report) error {
	name := historyName(rep.StartedAt)
	err := atomicfile.Write(filepath.Join(h.dir, name), 0o600, func(w io.Writer) error { return writeReport(w, rep) })
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// intern makes the points share one copy of each template and domain name.
// Only called with a fresh point, before it is published.
func (h *History) intern(p Point) Point {
	in := func(s string) string {
		if v, ok := h.names[s]; ok {
			return v
		}
		h.names[s] = s
		return s
	}
	dom := make(map[string]Totals, len(p.Domains))
	for k, v := range p.Domains {
		dom[in(k)] = v
	}
	tpl := make(map[string]Totals, len(p.Templates))
	for k, v := range p.Templates {
		tpl[in(k)] = v
	}
	p.Domains, p.Templates = dom, tpl
	if len(h.names) > 64<<10 { // templates renamed over a long life: start over
		clear(h.names)
	}
	return p
}

// Points returns the recorded audits, oldest first. Points are not
// modified once recorded.
func (h *History) Points() []Point {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Clone(h.points)
}

// open returns the saved report of the audit with the given ID.
func (h *History) open(id string) (*os.File, error) {
	if h.dir == "" {
		return nil, os.ErrNotExist
	}
	t, err := time.Parse(historyLayout, id)
	if err != nil || t.UTC().Format(historyLayout) != id {
		return nil, os.ErrNotExist
	}
	return os.Open(filepath.Join(h.dir, historyName(t)))
}

// Saved reports whether the audit with the given ID has a report file.
func (h *History) Saved(id string) bool {
	f, err := h.open(id)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func readReportFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readReport(bufio.NewReaderSize(f, 64<<10))
}

func readPointFile(path string) (Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return Point{}, err
	}
	defer f.Close()
	return readPoint(bufio.NewReaderSize(f, 64<<10))
}

// readPoint reads the point of a report file without building its
// findings and top keys (the bulk of a large report): encoding/json skips
// the fields a struct does not have without allocating them.
func readPoint(r io.Reader) (Point, error) {
	var part struct {
		Source     reportSource  `json:"source"`
		Registry   string        `json:"registry_digest"`
		StartedAt  time.Time     `json:"started_at"`
		DurationMS int64         `json:"duration_ms"`
		Complete   bool          `json:"complete"`
		Summary    reportSummary `json:"summary"`
		Groups     []reportGroup `json:"groups"`
		Estimate   bool          `json:"estimate"`
		NotChecked []string      `json:"not_checked"`
	}
	if err := json.NewDecoder(r).Decode(&part); err != nil {
		return Point{}, fmt.Errorf("read audit report: %w", err)
	}
	if part.Source.Kind == "" {
		return Point{}, errors.New("read audit report: no source.kind: not a keyguard audit report")
	}
	return pointOf(&Report{Source: part.Source, StartedAt: part.StartedAt, DurationMS: part.DurationMS, Complete: part.Complete,
		Summary: part.Summary, Groups: part.Groups, Estimate: part.Estimate, RegistryDigest: part.Registry, NotChecked: part.NotChecked}), nil
}
