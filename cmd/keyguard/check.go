package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "check", "check [flags] KEY... | check [flags] -",
		"  keyguard check promo:sku:1001 order:order:1001:base\n  redis-cli --scan | keyguard check - --only-findings\n  keyguard check - --format json < keys.txt > keys.ndjson")
	fs.registryFlag(e)
	fs.outputFlags("text", "json")
	fs.failOnFlag()
	onlyFindings := fs.Bool("only-findings", false, "print only keys that break a rule (the summary still counts all)")
	fs.maxLineFlag()
	nul := fs.Bool("0", false, "keys on stdin are separated by NUL bytes instead of newlines (keys may then hold newlines)")
	var docs string
	fs.docsURLFlag(&docs)
	keys, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return usagef("give keys as arguments, or - to read one per line from stdin")
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 64<<10)
	c := &checkRun{reg: reg, chk: reg.NewChecker(), w: w, json: fs.opts.format == "json", onlyFindings: *onlyFindings, threshold: fs.threshold(), docs: docs}
	for _, k := range keys {
		if k != "-" {
			c.key(k)
			continue
		}
		sep := byte('\n')
		if *nul {
			sep = 0
		}
		if err = readKeys(ctx, e.stdin, sep, int64(fs.opts.maxLineBytes), c.key); err != nil {
			break
		}
	}
	if err == nil && !c.json {
		c.summary()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err := out.finish(err); err != nil {
		return err
	}
	if c.failed {
		return errFindings
	}
	return nil
}

// readKeys calls fn for every sep-terminated key of r, stripping a
// trailing \r from newline-separated input. Keys of any bytes pass
// through; a line longer than maxLine bytes is refused by its number. fn
// must not keep the string.
func readKeys(ctx context.Context, r io.Reader, sep byte, maxLine int64, fn func(string)) error {
	br := bufio.NewReaderSize(&ctxReader{ctx: ctx, r: r}, 256<<10)
	var long []byte
	for n := int64(0); ; {
		if n&4095 == 0 && ctx.Err() != nil {
			return fmt.Errorf("interrupted after %s: %w", human.Plural(n, "key"), ctx.Err())
		}
		line, err := br.ReadSlice(sep)
		if errors.Is(err, bufio.ErrBufferFull) {
			if int64(len(long)+len(line)) > maxLine {
				return report.LineTooLong(n+1, maxLine)
			}
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
			n++
			line = bytes.TrimSuffix(line, []byte{sep})
			if sep == '\n' {
				line = bytes.TrimSuffix(line, []byte{'\r'})
			}
			if int64(len(line)) > maxLine {
				return report.LineTooLong(n, maxLine)
			}
			if len(line) > 0 {
				fn(string(line))
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("interrupted after %s: %w", human.Plural(n, "key"), ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("read keys: %w", err)
		}
	}
}

// ctxReader is r, whose Read returns ctx's error as soon as ctx is done:
// a read from a terminal or a pipe that waits for input does not hold up
// Ctrl-C. The read itself goes on in the background; its bytes are
// dropped (the command is ending).
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	done chan readResult // the read under way, nil when none
	buf  []byte
	rest []byte // read but not yet returned
	err  error  // of the read that gave rest
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		if len(c.rest) == 0 {
			return n, c.err
		}
		return n, nil
	}
	if c.done == nil {
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf, done := c.buf[:len(p)], make(chan readResult, 1)
		c.done = done
		go func() {
			n, err := c.r.Read(buf)
			done <- readResult{n, err}
		}()
	}
	select {
	case res := <-c.done:
		c.done = nil
		n := copy(p, c.buf[:res.n])
		if n < res.n {
			c.rest, c.err = c.buf[n:res.n], res.err
			return n, nil
		}
		return n, res.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
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
		fmt.Fprintf(w, "  %s  owner=%s type=%s ttl=%s", e.Key, orDash(e.Owner), e.Type, e.TTLText())
		for _, cp := range res.Captures {
			fmt.Fprintf(w, " %s=%s", cp.Name, printable(cp.Value))
		}
	} else {
		fmt.Fprintf(w, "  unregistered (looks like %s)", printable(res.Inferred))
	}
	w.WriteByte('\n')
	for _, f := range c.fds {
		fmt.Fprintf(w, "  %s %s: %s\n", f.Severity, f.Rule, f.Message)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
	Findings   []docFinding      `json:"findings"`
}

func (c *checkRun) writeJSON(k string, res registry.Result) {
	for i := range c.fds {
		c.fds[i].Key = "" // the line's key already says it
	}
	v := keyJSON{Key: k, Findings: withDocs(c.fds, c.docs)}
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
	fmt.Fprintf(c.w, "%s: %d registered, %d unregistered; %s\n", human.Plural(int64(c.keys), "key"), c.registered, c.keys-c.registered, c.counts)
}
