package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/keyguard/keyguard/internal/atomicfile"
)

// Output is where a command writes: stdout, or --out written to a
// temporary file beside it and renamed into place only on success, so a
// failed run never leaves half a report. Commands open it before they
// start their work, so that an --out that cannot be written fails at
// once rather than after an hour's scan.
type Output struct {
	io.Writer
	file   *atomicfile.File // nil for stdout and devices
	device *os.File         // a device or pipe, written in place
	flag   string           // the flag that named the file, for messages: --out, --keys
}

// OpenOutput opens the --out file of fs.
func (fs *FlagSet) OpenOutput(e *Env) (*Output, error) {
	return OpenOutput(e, "--out", fs.Opts.Out)
}

// OpenOutput opens path, named by flag (--out, --keys); "" or "-" is
// stdout.
func OpenOutput(e *Env, flag, path string) (*Output, error) {
	if path == "" || path == "-" {
		return &Output{Writer: e.Stdout}, nil
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, Usagef("%s %s is a directory: name a file in it, e.g. %s %s", flag, path, flag, filepath.Join(path, "report.json"))
	case err == nil && !fi.Mode().IsRegular():
		// /dev/null, /dev/stdout, a FIFO: renaming a temporary file over
		// it would replace the device node itself (as root).
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("cannot write %s %s: %w", flag, path, errors.Unwrap(err))
		}
		return &Output{Writer: f, device: f, flag: flag}, nil
	}
	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return nil, outError(flag, path, filepath.Dir(path), err)
	}
	return &Output{Writer: f, file: f, flag: flag}, nil
}

// outError says why a file cannot be written without naming the
// temporary file it tried.
func outError(flag, path, dir string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s %s: the directory %s does not exist (create it first: mkdir -p %s)", flag, path, dir, dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot write %s %s: no permission to create files in %s", flag, path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot write %s %s: %v", flag, path, err)
}

// Close commits the output when ok, or removes it.
func (o *Output) Close(ok bool) error {
	switch {
	case o.device != nil:
		return o.device.Close()
	case o.file == nil:
		return nil
	case !ok:
		o.file.Abort()
		return nil
	}
	if err := o.file.Commit(); err != nil {
		return outError(o.flag, o.file.Path(), filepath.Dir(o.file.Path()), err)
	}
	return nil
}

// Finish closes o after a command wrote it: committed when err is nil,
// removed otherwise. It returns err, or the error of committing.
func (o *Output) Finish(err error) error {
	if cerr := o.Close(err == nil); err == nil {
		err = cerr
	}
	return err
}

// KeepExisting makes a partial run's output go beside an existing file
// instead of over it (a complete report of an earlier run must not be
// replaced by a partial one unannounced). It returns the path the output
// will be written to ("" for stdout and devices).
func (o *Output) KeepExisting() string {
	if o.file == nil {
		return ""
	}
	if _, err := os.Stat(o.file.Path()); err == nil {
		o.file.SetPath(partialPath(o.file.Path()))
	}
	return o.file.Path()
}

// partialPath is "a.partial.json" for "a.json".
func partialPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".partial" + ext
}
