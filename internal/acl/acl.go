// Package acl turns the key registry into Redis 7 ACL rules: one user per
// service, read-write (%RW~) on the key patterns of the templates it owns
// or is listed in writers of, read-only (%R~) on those listing it in
// readers, nothing else.
//
//	users, err := acl.Users(reg, acl.Options{})
//	err = acl.WriteCommands(os.Stdout, users, acl.Options{}) // ACL SETUSER …
//	err = acl.WriteFile(f, users, acl.Options{})             // aclfile lines
//
// Key patterns are Redis globs derived from templates: a placeholder becomes
// "*", and the glob metacharacters * ? [ ] \ in literal text are escaped.
// A "*" also matches the separator, so a pattern admits more keys than its
// template ("order:order:*:base" matches "order:order:1:2:base"): the ACL is
// a coarse server-side fence, the hook and the guard are the fine ones.
//
// The generated rules keep passwords as they are (they never say reset or
// resetpass): a new user cannot log in until an operator gives it a
// password (ACL SETUSER order-team >secret). Commands default to
// DefaultCommands.
//
// It is pure (no network) and imports only package registry; the SDK must
// not import it.
package acl

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/keyguard/keyguard/registry"
)

// DefaultCommands is the command rule of every user: everything but the
// @dangerous category, which in Redis 7.0 holds KEYS, FLUSHALL, FLUSHDB,
// SWAPDB, CONFIG, DEBUG, MONITOR, INFO, SORT, MIGRATE, RESTORE, SHUTDOWN,
// REPLICAOF, SLOWLOG, LATENCY, CLIENT KILL/LIST and the like — what a
// service sharing a Redis has no business running. Connection setup
// (HELLO, CLIENT SETNAME), scripts, pub/sub and CLUSTER SLOTS/SHARDS stay.
const DefaultCommands = "+@all -@dangerous"

// RecordPattern covers keyguard's writer records (redishook.RecordPrefix),
// which every service using the SDK's Recorder writes.
const RecordPattern = "keyguard:{writers}:*"

// Options shapes the rules.
type Options struct {
	// Commands is the command rule (DefaultCommands when empty), e.g.
	// "+@all -@dangerous +sort".
	Commands string
	// NoRecords leaves out RecordPattern.
	NoRecords bool
}

// Pattern is one key pattern and the templates it comes from.
type Pattern struct {
	Glob      string
	Templates []string
}

// User is the access of one service.
type User struct {
	Name  string
	Write []Pattern // %RW~
	Read  []Pattern // %R~ (patterns already in Write are left out)
}

// Users returns one user per service the registry names (owners of domains
// and templates, writers and readers), sorted by name.
func Users(reg *registry.Registry, opts Options) ([]User, error) {
	type acc struct {
		write, read map[string][]string // glob → templates
	}
	users := map[string]*acc{}
	get := func(name string) *acc {
		a := users[name]
		if a == nil {
			a = &acc{write: map[string][]string{}, read: map[string][]string{}}
			users[name] = a
		}
		return a
	}
	for _, o := range reg.Owners() {
		get(o)
	}
	for _, e := range reg.Entries {
		glob := e.Template.Glob()
		tmpl := e.Template.String()
		writers := append([]string{e.Owner}, e.Writers...)
		for _, w := range writers {
			if w != "" {
				a := get(w)
				a.write[glob] = append(a.write[glob], tmpl)
			}
		}
		for _, r := range e.Readers {
			a := get(r)
			a.read[glob] = append(a.read[glob], tmpl)
		}
	}
	names := make([]string, 0, len(users))
	for n := range users {
		if err := validName(n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]User, 0, len(names))
	for _, n := range names {
		a := users[n]
		u := User{Name: n, Write: patterns(a.write, nil)}
		u.Read = patterns(a.read, a.write)
		if !opts.NoRecords {
			u.Write = append(u.Write, Pattern{Glob: RecordPattern, Templates: []string{"keyguard writer records"}})
		}
		out = append(out, u)
	}
	return out, nil
}

func patterns(m, skip map[string][]string) []Pattern {
	var out []Pattern
	for g, ts := range m {
		if _, dup := skip[g]; dup {
			continue
		}
		out = append(out, Pattern{Glob: g, Templates: dedupe(ts)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Glob < out[j].Glob })
	return out
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// validName rejects user names an ACL file cannot hold.
func validName(n string) error {
	for i := 0; i < len(n); i++ {
		if n[i] <= ' ' || n[i] == 0x7f {
			return fmt.Errorf("acl: service %q cannot be a Redis user name (spaces and control characters are not allowed); rename it in the registry", n)
		}
	}
	return nil
}

// Rules returns the ACL rules of u after its name: "on resetkeys
// resetchannels nocommands <commands> %RW~… %R~…". resetkeys, resetchannels
// and nocommands make the rules idempotent on an existing user; the
// password is left alone.
func (u User) Rules(opts Options) []string {
	cmds := opts.Commands
	if cmds == "" {
		cmds = DefaultCommands
	}
	r := []string{"on", "resetkeys", "resetchannels", "nocommands"}
	r = append(r, strings.Fields(cmds)...)
	for _, p := range u.Write {
		r = append(r, "%RW~"+p.Glob)
	}
	for _, p := range u.Read {
		r = append(r, "%R~"+p.Glob)
	}
	return r
}

// header explains the generated rules; written as comments where the
// format allows them.
func header(opts Options) []string {
	cmds := opts.Commands
	if cmds == "" {
		cmds = DefaultCommands
	}
	return []string{
		"keyguard acl: one Redis 7 user per service, generated from the key registry.",
		"Key patterns are globs: '*' stands for a placeholder and also matches the separator, so a pattern admits more keys than its template.",
		"Passwords are not set here: give each user one, e.g. ACL SETUSER order-team >secret (or #<sha256> in an ACL file).",
		"Commands: " + cmds + ". Disable the default user once the services log in as these users.",
	}
}

// WriteCommands writes one "ACL SETUSER" line per user, preceded by '#'
// comment lines (strip them before piping to redis-cli: grep -v '^#').
func WriteCommands(w io.Writer, users []User, opts Options) error {
	for _, h := range header(opts) {
		fmt.Fprintf(w, "# %s\n", h)
	}
	for _, u := range users {
		fmt.Fprintf(w, "# %s: writes %s", u.Name, describe(u.Write))
		if len(u.Read) > 0 {
			fmt.Fprintf(w, "; reads %s", describe(u.Read))
		}
		fmt.Fprintln(w)
		args := append([]string{"ACL", "SETUSER", u.Name}, u.Rules(opts)...)
		for i, a := range args {
			args[i] = quote(a)
		}
		if _, err := fmt.Fprintln(w, strings.Join(args, " ")); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes the users as ACL file lines ("user NAME rules…"). ACL
// files have no comments; the header goes to notes (may be nil). An ACL
// file defines users from scratch: add each user's password (#<sha256> or
// >password) to its line.
func WriteFile(w io.Writer, notes io.Writer, users []User, opts Options) error {
	if notes != nil {
		for _, h := range header(opts) {
			fmt.Fprintf(notes, "note: %s\n", h)
		}
	}
	for _, u := range users {
		rules := u.Rules(opts)
		for _, r := range rules {
			if strings.ContainsAny(r, " \t\r\n\"'") {
				return fmt.Errorf("acl: user %s: rule %q has a space or a quote, which an ACL file cannot hold; use --format commands", u.Name, r)
			}
		}
		if _, err := fmt.Fprintf(w, "user %s %s\n", u.Name, strings.Join(rules, " ")); err != nil {
			return err
		}
	}
	return nil
}

func describe(ps []Pattern) string {
	var s []string
	for _, p := range ps {
		s = append(s, strings.Join(p.Templates, ", "))
	}
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, "; ")
}

// quote quotes an argument for redis-cli when it holds a space, a quote or
// a control character (inside double quotes redis-cli reads \\ and \").
func quote(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\r\n\"'") {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(a); i++ {
		switch c := a[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
