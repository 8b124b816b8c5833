package rediscmd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// argDoc is one COMMAND DOCS argument.
type argDoc struct {
	Name, Type, Token            string
	Optional, Multiple, MultiTok bool
	Args                         []argDoc
}

// fetchDocs reads COMMAND DOCS (RESP2) into "name" or "container|sub" ->
// argument list.
func fetchDocs(ctx context.Context, c *redis.Client) (map[string][]argDoc, error) {
	res, err := c.Do(ctx, "command", "docs").Slice()
	if err != nil {
		return nil, fmt.Errorf("COMMAND DOCS: %w", err)
	}
	out := map[string][]argDoc{}
	if err := docsMap(res, out); err != nil {
		return nil, err
	}
	return out, nil
}

func docsMap(flat []any, out map[string][]argDoc) error {
	for i := 0; i+1 < len(flat); i += 2 {
		name, _ := flat[i].(string)
		doc, err := pairs(flat[i+1])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		args, err := parseArgs(doc["arguments"])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out[strings.ToLower(name)] = args
		if subs, ok := doc["subcommands"].([]any); ok {
			if err := docsMap(subs, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func pairs(v any) (map[string]any, error) {
	a, ok := v.([]any)
	if !ok || len(a)%2 != 0 {
		return nil, fmt.Errorf("want a flat map, got %T", v)
	}
	m := map[string]any{}
	for i := 0; i < len(a); i += 2 {
		k, _ := a[i].(string)
		m[k] = a[i+1]
	}
	return m, nil
}

func parseArgs(v any) ([]argDoc, error) {
	list, _ := v.([]any)
	var out []argDoc
	for _, e := range list {
		m, err := pairs(e)
		if err != nil {
			return nil, err
		}
		var a argDoc
		a.Name, _ = m["name"].(string)
		a.Type, _ = m["type"].(string)
		a.Token, _ = m["token"].(string)
		flags, _ := m["flags"].([]any)
		for _, f := range flags {
			switch f {
			case "optional":
				a.Optional = true
			case "multiple":
				a.Multiple = true
			case "multiple_token":
				a.MultiTok = true
			}
		}
		if a.Args, err = parseArgs(m["arguments"]); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// variant says how to instantiate an argument tree.
type variant struct {
	optional bool // include optional arguments
	reps     int  // instances of a "multiple" argument (and the numkeys value)
	choice   int  // alternative of a oneof; -1 is the last
}

var variants = []variant{
	{optional: false, reps: 1, choice: 0},
	{optional: true, reps: 1, choice: 0},
	{optional: true, reps: 2, choice: -1},
	{optional: true, reps: 2, choice: 1},
	{optional: false, reps: 3, choice: -1},
}

// docCorpus builds command lines for every key-bearing command from its
// COMMAND DOCS argument tree, one per distinct variant.
func docCorpus(t *testing.T, docs map[string][]argDoc) [][]any {
	t.Helper()
	var names []string
	for i := range Commands() {
		if c := &Commands()[i]; c.HasKeys() {
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	var corpus [][]any
	for _, name := range names {
		argTree, ok := docs[name]
		if !ok {
			t.Errorf("COMMAND DOCS has no entry for %s", name)
			continue
		}
		seen := map[string]bool{}
		for _, v := range variants {
			var line []any
			for _, p := range strings.Split(name, "|") {
				line = append(line, p)
			}
			keyN := 0
			line = render(line, argTree, v, &keyN)
			id := fmt.Sprint(line...)
			if !seen[id] {
				seen[id] = true
				corpus = append(corpus, line)
			}
		}
	}
	return corpus
}

func render(line []any, args []argDoc, v variant, keyN *int) []any {
	for _, a := range args {
		if a.Optional && !v.optional {
			continue
		}
		n := 1
		if a.Multiple {
			n = v.reps
		}
		for i := range n {
			if a.Token != "" && a.Type != "pure-token" && (i == 0 || a.MultiTok) {
				line = append(line, a.Token)
			}
			line = renderOne(line, a, v, keyN)
		}
	}
	return line
}

func renderOne(line []any, a argDoc, v variant, keyN *int) []any {
	switch a.Type {
	case "key":
		*keyN++
		return append(line, "key:"+strconv.Itoa(*keyN))
	case "pure-token":
		return append(line, a.Token)
	case "integer":
		if a.Name == "numkeys" {
			return append(line, strconv.Itoa(v.reps))
		}
		return append(line, "1")
	case "double":
		return append(line, "1.5")
	case "pattern":
		return append(line, "pat*")
	case "unix-time":
		return append(line, "1700000000")
	case "block":
		return render(line, a.Args, v, keyN)
	case "oneof":
		if len(a.Args) == 0 {
			return line
		}
		i := v.choice
		if i < 0 || i >= len(a.Args) {
			i = len(a.Args) - 1
		}
		alt := slices.Clone(a.Args[i : i+1])
		alt[0].Optional = false
		return render(line, alt, v, keyN)
	}
	return append(line, "val")
}
