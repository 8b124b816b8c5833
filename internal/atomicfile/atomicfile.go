// Package atomicfile writes a file whole or not at all: the data goes to a
// temporary file beside the target, is synced to disk, and is renamed over
// the target only when every write succeeded. A crash or an error leaves
// the old file (or none), never half a new one. Reports, migration
// cursors, the dashboard's history and generated code are all written so.
//
//	f, err := atomicfile.Create("report.json", 0o644)
//	// write to f ...
//	err = f.Commit() // or f.Abort()
//
// It imports no package of this module.
package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written; it replaces its target on Commit.
type File struct {
	f    *os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts writing path. The temporary file is created now, so a
// directory that cannot be written fails before any work is done. Errors
// name path, never the temporary file.
func Create(path string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, pathError("create", path, err)
	}
	return &File{f: f, path: path, perm: perm}, nil
}

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Path is the file that Commit replaces.
func (f *File) Path() string { return f.path }

// SetPath changes the file that Commit replaces (for example to keep an
// existing file and write beside it).
func (f *File) SetPath(path string) { f.path = path }

// Commit syncs the data, sets the permissions and renames the temporary
// file over the target. After an error the target is unchanged and the
// temporary file is gone.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	f.done = true
	name := f.f.Name()
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, f.perm)
	}
	if err == nil {
		err = os.Rename(name, f.path)
	}
	if err != nil {
		os.Remove(name)
		return pathError("write", f.path, err)
	}
	// The rename is durable once the directory is synced; a directory
	// that cannot be opened or synced (some file systems) still holds
	// the complete file.
	if d, derr := os.Open(filepath.Dir(f.path)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort drops what was written; the target is unchanged. Abort after
// Commit does nothing, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	name := f.f.Name()
	f.f.Close()
	os.Remove(name)
}

// Write writes path whole with what fn writes (buffered), or leaves it
// unchanged when fn or the file system fails.
func Write(path string, perm os.FileMode, fn func(w io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := fn(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return pathError("write", path, err)
	}
	return f.Commit()
}

// WriteFile is os.WriteFile, atomic.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// pathError reports err on path without the temporary file's name.
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &pe):
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
