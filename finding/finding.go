// Package finding defines what every keyguard check reports: a rule ID, a
// severity and a message a person can act on. Findings are data, not
// errors.
//
//	f := finding.Finding{Rule: finding.NoTTL, Severity: finding.Error, Key: k, Message: "…"}
//	if f.Severity.AtLeast(threshold) { exit = 1 }
//
// It imports only internal/human, and every layer may import it.
package finding

import (
	"fmt"
	"strconv"
	"strings"
)

// Stable rule IDs. Each has a section in docs/rules.md (DocURL).
const (
	Overlap          = "overlap"
	Domain           = "domain"
	NoTTL            = "no-ttl"
	Case             = "naming/case"
	Charset          = "naming/charset"
	Length           = "naming/length"
	Separator        = "naming/separator"
	LeadingID        = "naming/leading-id"
	Timestamp        = "naming/timestamp"
	PII              = "pii"
	Unregistered     = "unregistered"
	TypeMismatch     = "type-mismatch"
	TTLMismatch      = "ttl-mismatch"
	BigKey           = "big-key"
	HotKey           = "hot-key"
	GuardOwnerless   = "guard/ownerless"
	GuardForeign     = "guard/foreign-owner"
	MixedSchema      = "mixed-schema"
	Schema           = "schema"
	ValueFormat      = "value-format"
	UnregisteredCode = "unregistered-code"
	RawKey           = "raw-key"
	// Evidence only keyguard investigate gathers.
	SecondWriter   = "second-writer"   // two services wrote one key during the capture
	ForeignWriter  = "foreign-writer"  // a service wrote a key its team does not own
	TTLFluctuation = "ttl-fluctuation" // writes gave one key different TTLs
	// Registry-only rules.
	TTLPolicy = "ttl-policy" // persistent with a ttl, jitter over ttl, lock/verify TTLs too long
	KeyModel  = "key-model"  // domain/entityType/attribute fields that disagree with the key
	Owner     = "owner"      // an entry nobody owns, or whose owner is still FILL-IN
	FillIn    = "fill-in"    // a value still FILL-IN, as keyguard init and audits' suggested entries leave them
	Load      = "load"       // the registry file does not load (syntax, unknown field, bad value)
)

// Severity orders findings. The zero value is Info.
type Severity uint8

// Severities, lowest first.
const (
	Info Severity = iota
	Warning
	Error
	// Never is above every severity: --fail-on never.
	Never
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	default:
		return "never"
	}
}

// AtLeast reports whether s is at or above t.
func (s Severity) AtLeast(t Severity) bool { return s >= t }

// MarshalText writes the severity name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	*s = v
	return err
}

// ParseSeverity reads error, warning, info or never.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	case "never", "none":
		return Never, nil
	}
	return Error, fmt.Errorf("unknown severity %q: use error, warning, info or never", s)
}

// Finding is one broken rule.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Key      string   `json:"key,omitempty"`
	Template string   `json:"template,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
}

// Where is "file:line:col" when the finding has a position, else "".
func (f *Finding) Where() string {
	if f.File == "" || f.Line == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
}

// Display renders a key or part of one for a message: printable text as is
// in quotes, other bytes escaped, and long keys cut with their length said.
func Display(s string) string {
	const max = 120
	if len(s) > max {
		return strconv.Quote(s[:max]) + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return strconv.Quote(s)
}
