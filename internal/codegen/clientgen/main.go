// Command clientgen writes the guard's Lua script and the version into the
// client packages under clients/ (go generate ./clients), or with -check
// reports the copies that are stale. The script's one source is
// guard/guard.lua; the version's is clients/VERSION.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/codegen"
)

func main() {
	root := flag.String("clients", ".", "the clients/ directory")
	check := flag.Bool("check", false, "write nothing: exit 1 with a diff when a generated file is stale")
	flag.Parse()
	stale, err := run(*root, *check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgen:", err)
		os.Exit(2)
	}
	if stale {
		fmt.Fprintln(os.Stderr, "clientgen: generated files are stale; run: go generate ./clients")
		os.Exit(1)
	}
}

func run(root string, check bool) (stale bool, err error) {
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return false, err
	}
	version := strings.TrimSpace(string(v))
	files := codegen.ClientFiles(guard.Script(), version)
	manifests, err := codegen.ClientManifests(func(p string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	}, version)
	if err != nil {
		return false, err
	}
	for _, f := range append(files, manifests...) {
		dir := filepath.Join(root, filepath.FromSlash(f.Dir))
		if !check {
			if err := f.Write(dir); err != nil {
				return false, err
			}
			continue
		}
		diff, err := f.Diff(dir)
		if err != nil {
			return false, err
		}
		if diff != nil {
			os.Stderr.Write(diff)
			stale = true
		}
	}
	return stale, nil
}
