package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/hugepage"
)

// ReportOutput is where and how an audit writes its report, the same for
// keyguard audit and keyguard rdb.
type ReportOutput struct {
	Format     string // text, json, csv or html
	Out        string
	Keys       string // --keys: every key read, one row each, to this file
	KeysFormat string
	View       ReportView
	TopSet     bool // --top was given: the text lists that many keys
	Threshold  finding.Severity
}

// ReportView is how a report is shown beyond its format.
type ReportView struct {
	Depth   int    // memory by prefix down to this many segments; 0 none
	Sep     byte   // the registry's separator
	Verbose bool   // text: every section in full
	Top     int    // text: largest keys listed (0: the default)
	Next    string // text: the report's last line, what to run next
	DocsURL string // where docs/ is published: absolute rule links
}

// WriteReport renders rep in format (one of reportFormats) to out, then
// commits out: an --out file is renamed into place only when the whole
// report was written, and removed otherwise.
func WriteReport(out *Output, format string, rep *report.Report, v ReportView) error {
	if v.Depth > 0 {
		rep.Prefixes = report.PrefixTree(rep.Groups, v.Sep, v.Depth)
	}
	if v.DocsURL != "" {
		rep.LinkDocs(v.DocsURL)
	}
	var err error
	switch format {
	case "json":
		err = rep.WriteJSON(out)
	case "csv":
		err = rep.WriteCSV(out)
	case "html":
		err = rep.WriteHTML(out)
	case "text":
		err = rep.WriteText(out, report.TextOptions{Verbose: v.Verbose, Top: v.Top, Next: v.Next})
	default:
		err = fmt.Errorf("unknown report format %q (use text, json, csv or html)", format)
	}
	if err := out.Finish(err); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// KeysFile is an open --keys file: every key read, one row each.
type KeysFile struct {
	out *Output
	bw  *bufio.Writer
	x   *report.KeyExport
}

// OpenKeys opens the --keys file path in format (csv, jsonl; "" by the
// name) and returns nil without one: written to a temporary file beside
// it, renamed into place when the run ends.
func OpenKeys(e *Env, path, format string) (*KeysFile, error) {
	if path == "" {
		return nil, nil
	}
	if format == "" {
		format = report.KeysCSV
		if ext := strings.ToLower(filepath.Ext(path)); ext == ".jsonl" || ext == ".json" || ext == ".ndjson" {
			format = report.KeysJSONL
		}
	}
	if path == "-" {
		return nil, Usagef("--keys -: the rows would mix with the report on stdout; name a file")
	}
	out, err := OpenOutput(e, "--keys", path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	x, err := report.NewKeyExport(bw, format)
	if err != nil {
		out.Close(false)
		return nil, err
	}
	return &KeysFile{out: out, bw: bw, x: x}, nil
}

// Export is the export to give the aggregation; nil without --keys.
func (k *KeysFile) Export() *report.KeyExport {
	if k == nil {
		return nil
	}
	return k.x
}

// close commits the file when ok (and every row was written), or
// removes it.
func (k *KeysFile) Close(ok bool) error {
	if k == nil {
		return nil
	}
	err := k.x.Err()
	if err == nil {
		err = k.bw.Flush()
	}
	if !ok {
		k.out.Close(false)
		return nil
	}
	return k.out.Finish(err)
}

// InitNext is the command that writes a registry from the report an
// audit without a registry wrote to out in format: init --from-audit
// reads a JSON report, so other formats (and a report sent to a device,
// /dev/null, /dev/stdout) name the run that writes one.
func InitNext(format, out, rerun string) string {
	if format == "json" && out != "" && out != "-" && !strings.HasPrefix(out, "/dev/") {
		return "keyguard init --from-audit " + ShellQuote(out) + " writes a keyguard.yaml of these families"
	}
	return "keyguard " + rerun + " --format json --out audit.json, then keyguard init --from-audit audit.json writes a keyguard.yaml of these families"
}

// ShellQuote quotes a file name for a command line when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// auditVerdict is ErrFindings when a finding reaches the threshold.
func ReportVerdict(c report.SeverityCount, threshold finding.Severity) error {
	n := int64(0)
	switch threshold {
	case finding.Info:
		n = c.Error + c.Warning + c.Info
	case finding.Warning:
		n = c.Error + c.Warning
	case finding.Error:
		n = c.Error
	}
	if n > 0 {
		return ErrFindings
	}
	return nil
}

// WarmReports asks 2 MiB pages for the heap that reading the reports at
// paths takes (hugepage.Heap: ~4 bytes for a byte of JSON), when they
// hold at least warmReportBytes together ("-", stdin, counts none).
// Reading a large report is mostly fresh memory: diff of two 19.5 MB
// reports took 35,000 page faults, half its CPU (bench/RESULTS.md). Call
// undo once they are read.
func WarmReports(paths ...string) (undo func()) { return hugepage.Heap(warmReportSize(paths...)) }

// WarmReportBytes is WarmReports for reports of total bytes together, for
// a caller that has their sizes already.
func WarmReportBytes(total int64) (undo func()) { return hugepage.Heap(reportHeap(total)) }

// warmReportSize is the heap WarmReports asks for; 0 none.
func warmReportSize(paths ...string) int {
	var total int64
	for _, p := range paths {
		if p == "-" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
	}
	return reportHeap(total)
}

// reportHeap is the heap reading reports of total bytes takes; 0 under
// warmReportBytes.
func reportHeap(total int64) int {
	if total < warmReportBytes {
		return 0
	}
	return int(min(4*total, warmReportMax))
}

const (
	warmReportBytes = 8 << 20
	warmReportMax   = 1 << 30
)

// ReadReportFile reads an audit report from path, or from stdin for "-".
func ReadReportFile(e *Env, path string) (*report.Report, error) {
	var r io.Reader
	if path == "-" {
		r = e.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w\n\tTry: write reports with keyguard audit --format json --out FILE", err)
		}
		defer f.Close()
		r = f
	}
	rep, err := report.ReadReport(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
