package investigate

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// Report is everything an investigation found, in the order the chain is
// walked: keys, their values' styles, the slow log, the TTL watch, the
// capture of writers, then the conclusion and the findings.
type Report struct {
	Target   string `json:"target"` // the server, as a URL without password
	Registry string `json:"registry"`
	// NoRegistry: no registry was given or found; the keys are of the
	// families inferred from their names, and none is called unregistered.
	NoRegistry bool      `json:"no_registry,omitempty"`
	Query      Query     `json:"query"`
	StartedAt  time.Time `json:"started_at"`
	Duration   Millis    `json:"duration_ms"`
	Nodes      int       `json:"nodes"`
	ShowValues bool      `json:"values_shown"`

	Keys     []KeyInfo `json:"keys"`
	MoreKeys int       `json:"more_keys,omitempty"` // found beyond Options.MaxKeys, left out
	// Search is what the key search covered (as an audit's coverage
	// block): every key of every master, or the parts not searched and
	// why. Nil for --key, which needs no search.
	Search      *report.Coverage `json:"search,omitempty"`
	SearchNotes []string         `json:"search_notes,omitempty"` // restarts, slots searched again
	Styles      []Style          `json:"styles"`
	SlowLog     []SlowEntry      `json:"slowlog"`
	// SlowLogNotRead are the nodes whose slow log could not be read, the
	// search having found them down too: "addr: why".
	SlowLogNotRead []string       `json:"slowlog_not_read,omitempty"`
	Watch          *WatchResult   `json:"watch,omitempty"`
	Capture        *CaptureResult `json:"capture,omitempty"`
	Notify         *NotifyResult  `json:"notify,omitempty"`

	// NotObserved are the spans the watch or a capture lost (the
	// connection failed): nothing is concluded from them.
	NotObserved []Span `json:"not_observed,omitempty"`

	Conclusion []string          `json:"conclusion"` // the story, one sentence an item
	Fixes      []string          `json:"fixes"`      // what the registry says to change
	Findings   []finding.Finding `json:"findings"`
}

// Query is what was asked for.
type Query struct {
	ID    string `json:"id,omitempty"`
	Key   string `json:"key,omitempty"`
	Match string `json:"match,omitempty"`
}

// WatchResult is the TTL watch.
type WatchResult struct {
	Duration  Millis     `json:"duration_ms"`          // the span watched
	Planned   Millis     `json:"planned_ms,omitempty"` // the span asked for, when the watch stopped before it
	Interval  Millis     `json:"interval_ms"`
	Keys      []TTLWatch `json:"keys"`
	Unwatched int        `json:"unwatched,omitempty"` // keys found beyond the watch's bound
}

// CaptureResult is the MONITOR capture of every node that holds the keys.
type CaptureResult struct {
	Limits struct {
		Duration Millis `json:"duration_ms"`
		MaxLines int64  `json:"max_lines"`
		MaxBytes int64  `json:"max_bytes"`
	} `json:"limits"`
	Nodes []NodeCapture `json:"nodes"`
	Keys  []KeyActivity `json:"keys"`
}

// Span is a stretch of time a step of the investigation did not observe
// on a node.
type Span struct {
	Step   string `json:"step"` // "TTL watch" or "capture"
	Node   string `json:"node"`
	From   Millis `json:"from_ms"` // since the step began
	To     Millis `json:"to_ms"`
	Reason string `json:"reason"`
}

// String is "TTL watch on 10.0.0.1:6379 from 2s to 8s (connection refused)".
func (s Span) String() string {
	return fmt.Sprintf("%s on %s from %s to %s (%s)", s.Step, s.Node,
		time.Duration(s.From).Round(100*time.Millisecond), time.Duration(s.To).Round(100*time.Millisecond), s.Reason)
}

// Millis is a duration that JSON writes in whole milliseconds.
type Millis time.Duration

// MarshalJSON writes the milliseconds.
func (m Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, time.Duration(m).Milliseconds(), 10), nil
}

// Micros is a duration that JSON writes in whole microseconds.
type Micros time.Duration

// MarshalJSON writes the microseconds.
func (m Micros) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, time.Duration(m).Microseconds(), 10), nil
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	return jsonout.Write(w, r)
}

// Worst is the highest severity among the findings, and false when there
// are none.
func (r *Report) Worst() (finding.Severity, bool) {
	var worst finding.Severity
	for _, f := range r.Findings {
		worst = max(worst, f.Severity)
	}
	return worst, len(r.Findings) > 0
}

func itoa(i int) string { return strconv.Itoa(i) }

func seconds(s int64) time.Duration { return time.Duration(s) * time.Second }

// NotSearched lists the parts of the keyspace the key search did not
// cover, and why; none when it covered every key.
func (r *Report) NotSearched() []string {
	if r.Search == nil {
		return nil
	}
	var out []string
	for _, g := range r.Search.NotCovered {
		out = append(out, g.String())
	}
	return out
}
