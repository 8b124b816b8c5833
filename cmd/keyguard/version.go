package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// versionInfo is what a build says about itself.
type versionInfo struct {
	Version  string `json:"version"`            // module version: v1.2.3, a pseudo-version, or (devel)
	Revision string `json:"revision,omitempty"` // VCS commit
	Time     string `json:"time,omitempty"`     // commit time, RFC 3339
	Modified bool   `json:"modified"`           // built from a work tree with uncommitted changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// buildVersion reads the module version and the VCS stamp that go build
// writes into the binary (go run and go test write no VCS stamp).
func buildVersion(bi *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if !ok || bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// moduleVersion is the version SARIF names the tool with: the module's,
// "" for a development build.
func moduleVersion() string {
	if v := buildVersion(debug.ReadBuildInfo()); v.Version != "(devel)" && v.Version != "(unknown)" {
		return v.Version
	}
	return ""
}

func (v versionInfo) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "keyguard %s", v.Version)
	if v.Revision != "" {
		fmt.Fprintf(&b, "\nrevision %s", v.Revision)
		if v.Time != "" {
			fmt.Fprintf(&b, " (%s)", v.Time)
		}
		if v.Modified {
			b.WriteString(", with uncommitted changes")
		}
	}
	fmt.Fprintf(&b, "\nbuilt with %s for %s\n", v.Go, v.Platform)
	_, err := io.WriteString(w, b.String())
	return err
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version [--format text|json]",
		"  keyguard version\n  keyguard --version\n  keyguard version --format json | jq -r .revision")
	fs.OutputFlags("text", "json")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("version takes no arguments; got %q", pos[0])
	}
	v := buildVersion(debug.ReadBuildInfo())
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	if fs.Opts.Format == "json" {
		err = jsonout.Write(out, v)
	} else {
		err = v.writeText(out)
	}
	return out.Finish(err)
}
