package keycheck

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// CheckOptions are what keyguard check runs with.
type CheckOptions struct {
	Registry     *registry.Registry
	Keys         []string // "-" reads keys from stdin, one a line
	NUL          bool     // keys on stdin end with NUL, not a newline
	MaxLine      int64    // the longest key read from stdin
	Format       string   // text or json (one line per key)
	Out          string   // --out: a file, or "" for stdout
	OnlyFindings bool
	Threshold    finding.Severity
	Docs         string // --docs-url
	// NoRegistry: none was given or found (Registry is an empty
	// stand-in): each key is of its inferred family, and only the rules
	// of names (naming, personal data) apply.
	NoRegistry bool
}

// Check classifies concrete keys against the registry and prints one line
// each (a JSON object each with Format json) and, in text, a summary. It
// returns cli.ErrFindings when a finding reaches the threshold.
func Check(ctx context.Context, e *cli.Env, o CheckOptions) error {
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	reg := o.Registry
	w := bufio.NewWriterSize(out, 64<<10)
	c := &checkRun{reg: reg, chk: reg.NewChecker(), w: w, json: o.Format == "json", onlyFindings: o.OnlyFindings, threshold: o.Threshold, docs: o.Docs, noReg: o.NoRegistry}
	if o.NoRegistry {
		c.chk.NoRegistry()
	}
	for _, k := range o.Keys {
		if k != "-" {
			c.key(k)
			continue
		}
		sep := byte('\n')
		if o.NUL {
			sep = 0
		}
		if err = cli.ReadKeys(ctx, e.Stdin, sep, o.MaxLine, c.key); err != nil {
			break
		}
	}
	if err == nil && !c.json {
		c.summary()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err := out.Finish(err); err != nil {
		return err
	}
	if c.failed {
		return cli.ErrFindings
	}
	return nil
}

type checkRun struct {
	reg          *registry.Registry
	chk          *registry.Checker
	w            *bufio.Writer
	json         bool
	onlyFindings bool
	threshold    finding.Severity
	failed       bool
	docs         string // --docs-url
	noReg        bool   // CheckOptions.NoRegistry

	keys, registered int
	counts           finding.Counts
	fds              []finding.Finding
}

func (c *checkRun) key(k string) {
	c.keys++
	c.fds = c.fds[:0]
	res := c.chk.Check(k, func(f finding.Finding) { c.fds = append(c.fds, f) })
	if res.Entry != nil {
		c.registered++
	}
	for _, f := range c.fds {
		if f.Severity.AtLeast(c.threshold) {
			c.failed = true
		}
	}
	c.counts = c.counts.Add(finding.Count(c.fds))
	if c.onlyFindings && len(c.fds) == 0 {
		return
	}
	if c.json {
		c.writeJSON(k, res)
	} else {
		c.writeText(k, res)
	}
}

// printable returns the key as is when it prints on one line, otherwise
// quoted with escapes.
func printable(k string) string {
	if len(k) <= 200 && utf8.ValidString(k) && !strings.ContainsFunc(k, func(r rune) bool { return r < ' ' || r == 0x7f || r == ' ' }) {
		return k
	}
	return finding.Display(k)
}

func (c *checkRun) writeText(k string, res registry.Result) {
	w := c.w
	w.WriteString(printable(k))
	if e := res.Entry; e != nil {
		fmt.Fprintf(w, "  %s  owner=%s type=%s ttl=%s", e.Key, human.OrDash(e.Owner), e.Type, e.TTLText())
		for _, cp := range res.Captures {
			fmt.Fprintf(w, " %s=%s", cp.Name, printable(cp.Value))
		}
	} else if c.noReg {
		fmt.Fprintf(w, "  family %s", printable(res.Inferred))
	} else {
		fmt.Fprintf(w, "  unregistered (looks like %s)", printable(res.Inferred))
	}
	w.WriteByte('\n')
	for _, f := range c.fds {
		fmt.Fprintf(w, "  %s %s: %s\n", f.Severity, f.Rule, f.Message)
	}
}

type keyJSON struct {
	Key        string            `json:"key"`
	KeyBase64  string            `json:"key_base64,omitempty"`
	Template   string            `json:"template,omitempty"`
	Inferred   string            `json:"inferred,omitempty"`
	Owner      string            `json:"owner,omitempty"`
	Type       string            `json:"type,omitempty"`
	TTLSeconds int64             `json:"ttl_seconds,omitempty"`
	Jitter     int64             `json:"ttl_jitter_seconds,omitempty"`
	Persistent bool              `json:"persistent,omitempty"`
	Captures   map[string]string `json:"captures,omitempty"`
	Findings   []DocFinding      `json:"findings"`
}

func (c *checkRun) writeJSON(k string, res registry.Result) {
	for i := range c.fds {
		c.fds[i].Key = "" // the line's key already says it
	}
	v := keyJSON{Key: k, Findings: WithDocs(c.fds, c.docs)}
	if !utf8.ValidString(k) {
		v.KeyBase64 = base64.StdEncoding.EncodeToString([]byte(k))
	}
	if e := res.Entry; e != nil {
		v.Template, v.Owner, v.Type, v.Persistent = e.Key, e.Owner, e.Type, e.Persistent
		v.TTLSeconds, v.Jitter = int64(e.TTL.Seconds()), int64(e.TTLJitter.Seconds())
		if len(res.Captures) > 0 {
			v.Captures = map[string]string{}
			for _, cp := range res.Captures {
				v.Captures[cp.Name] = cp.Value
			}
		}
	} else {
		v.Inferred = res.Inferred
	}
	b, _ := json.Marshal(v)
	c.w.Write(b)
	c.w.WriteByte('\n')
}

func (c *checkRun) summary() {
	if c.noReg {
		fmt.Fprintf(c.w, "%s, no registry (none given, no keyguard.yaml here): the rules of names alone; %s\n", human.Plural(int64(c.keys), "key"), c.counts)
		return
	}
	fmt.Fprintf(c.w, "%s: %d registered, %d unregistered; %s\n", human.Plural(int64(c.keys), "key"), c.registered, c.keys-c.registered, c.counts)
}
