package finding

import (
	"fmt"
	"io"

	"github.com/keyguard/keyguard/internal/human"
)

// Counts is how many findings there are of each severity.
type Counts struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// Count counts fds by severity.
func Count(fds []Finding) Counts {
	var c Counts
	for _, f := range fds {
		switch f.Severity {
		case Error:
			c.Error++
		case Warning:
			c.Warning++
		default:
			c.Info++
		}
	}
	return c
}

// Add returns the sum of c and d.
func (c Counts) Add(d Counts) Counts {
	return Counts{c.Error + d.Error, c.Warning + d.Warning, c.Info + d.Info}
}

// String is "2 errors, 1 warning, 0 info", or "no findings".
func (c Counts) String() string {
	if c.Error+c.Warning+c.Info == 0 {
		return "no findings"
	}
	return human.Plural(c.Error, "error") + ", " + human.Plural(c.Warning, "warning") + ", " + human.Plural(c.Info, "info")
}

// WriteText writes one line per finding (where, severity, rule, message)
// with its hint below it, as lint and check print them.
func WriteText(w io.Writer, fds []Finding) error {
	for _, f := range fds {
		where := f.Where()
		if where != "" {
			where += ": "
		}
		if _, err := fmt.Fprintf(w, "%s%s %s: %s\n", where, f.Severity, f.Rule, f.Message); err != nil {
			return err
		}
		if f.Hint != "" {
			if _, err := fmt.Fprintf(w, "\tTry: %s\n", f.Hint); err != nil {
				return err
			}
		}
	}
	return nil
}
