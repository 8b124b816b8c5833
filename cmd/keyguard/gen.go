package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/codegen"
)

func runGen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gen", "gen --lang go|java|python|ts --pkg NAME --out DIR [--check] [--registry FILE]",
		"  keyguard gen --lang go --pkg keys --out internal/keys\n"+
			"  keyguard gen --lang java --pkg com.acme.redis --out src/main/java/com/acme/redis\n"+
			"  keyguard gen --lang python --pkg redis_keys --out app\n"+
			"  keyguard gen --lang ts --pkg redisKeys --out src\n"+
			"  keyguard gen --lang go --pkg keys --out internal/keys --check   # CI: exit 1 and a diff when stale\n"+
			"  //go:generate go run github.com/keyguard/keyguard/cmd/keyguard gen --lang go --pkg keys --registry ../keyguard.yaml --out .")
	fs.RegistryFlag(e.cli())
	var langs []string
	for _, l := range codegen.Langs() {
		langs = append(langs, string(l))
	}
	lang := fs.String("lang", "go", "target language: "+strings.Join(langs, "|"))
	pkg := fs.String("pkg", "", "Go package name, Java package (com.acme.keys), or Python / TypeScript module name")
	fs.StringVar(&fs.Opts.Out, "out", "", "output `directory`; the file is "+codegen.FileName(codegen.Go, "")+", Keys.java, NAME.py or NAME.ts")
	check := fs.Bool("check", false, "write nothing: exit 1 and print a diff when the file in --out is stale or missing, 0 when it is up to date")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("gen takes no arguments; got %q", pos[0])
	}
	known := false
	for _, l := range langs {
		known = known || l == *lang
	}
	if !known {
		return cli.Usagef("--lang %q: use one of %s", *lang, strings.Join(langs, ", "))
	}
	if *pkg == "" {
		return cli.Usagef("--pkg is required, e.g. --pkg keys")
	}
	if fs.Opts.Out == "" {
		return cli.Usagef("--out DIR is required, e.g. --out internal/keys")
	}
	reg, err := fs.LoadRegistry()
	if err != nil {
		return err
	}
	f, err := codegen.Generate(reg, codegen.Options{Lang: codegen.Lang(*lang), Package: *pkg, Source: fs.Opts.Registry})
	if err != nil {
		return err
	}
	if !*check {
		return f.Write(fs.Opts.Out)
	}
	diff, err := f.Diff(fs.Opts.Out)
	if err != nil {
		return err
	}
	if diff == nil {
		return nil
	}
	if _, err := e.stdout.Write(diff); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "keyguard gen: %s/%s is stale\n\tTry: keyguard gen --lang %s --pkg %s --registry %s --out %s\n", strings.TrimSuffix(fs.Opts.Out, "/"), f.Name, *lang, *pkg, fs.Opts.Registry, fs.Opts.Out)
	return cli.ErrFindings
}
