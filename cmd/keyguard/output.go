package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// output is where a command writes: stdout, or --out written to a
// temporary file and renamed into place only on success, so a failed run
// never leaves half a report.
type output struct {
	io.Writer
	file   *os.File
	path   string
	direct bool // a device or pipe, written in place
}

func (fs *flagSet) openOutput(e *env) (*output, error) {
	if fs.opts.out == "" || fs.opts.out == "-" {
		return &output{Writer: e.stdout}, nil
	}
	if fi, err := os.Stat(fs.opts.out); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		// /dev/null, /dev/stdout, a FIFO: renaming a temporary file over
		// it would replace the device node itself (as root).
		f, err := os.OpenFile(fs.opts.out, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		return &output{Writer: f, file: f, direct: true}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(fs.opts.out), "."+filepath.Base(fs.opts.out)+".*")
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return &output{Writer: f, file: f, path: fs.opts.out}, nil
}

// close commits the output when ok, or removes it.
func (o *output) close(ok bool) error {
	if o.file == nil {
		return nil
	}
	if o.direct {
		return o.file.Close()
	}
	name := o.file.Name()
	err := o.file.Close()
	if !ok || err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, o.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}
