package scancode

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// scan-code keeps this matcher rather than go-git's
// (plumbing/format/gitignore): held against git check-ignore on real trees
// (bench/gitignore; numbers in bench/RESULTS.md, "#25") it decided all
// 66,926 paths as git does, where go-git differed on 70 (it lets "dir/**"
// match dir itself, among others), and it decides a path 1.1 to 30 times
// faster; go-git would also link six more modules into the binary. Reading
// the rules is slower (regexp compilation), under a millisecond a
// repository.

// ignoreRule is one line of a .gitignore.
type ignoreRule struct {
	re      *regexp.Regexp // matches the path relative to the file's directory
	negate  bool           // !pattern: include again
	dirOnly bool           // pattern/: directories only
	// Most lines are a name ("node_modules", "/build") or a suffix
	// ("*.log"): they are matched without the regexp, which costs a
	// microsecond a rule (bench/gitignore).
	shape    byte   // shapeRegexp, shapeName or shapeSuffix
	anchored bool   // the pattern holds a slash: it matches from the file's directory
	text     string // the name, or the suffix after '*'
}

const (
	shapeRegexp = iota
	shapeName   // no wildcard: the whole path (anchored) or its last elements
	shapeSuffix // '*' then text without wildcard or slash: the last element ends with text
)

// match reports whether the rule's pattern matches sub, a path relative
// to the directory of its .gitignore.
func (r *ignoreRule) match(sub string) bool {
	switch r.shape {
	case shapeName:
		if r.anchored {
			return sub == r.text
		}
		return sub == r.text || len(sub) > len(r.text) && sub[len(sub)-len(r.text)-1] == '/' && strings.HasSuffix(sub, r.text)
	case shapeSuffix:
		base := sub
		if i := strings.LastIndexByte(sub, '/'); i >= 0 {
			if r.anchored {
				return false
			}
			base = sub[i+1:]
		}
		return strings.HasSuffix(base, r.text)
	}
	return r.re.MatchString(sub)
}

// parseIgnore reads a .gitignore: blank lines and # comments skipped,
// trailing spaces trimmed unless escaped, ! negates, a trailing / matches
// directories only, a pattern with a slash elsewhere is anchored to the
// file's directory, ** spans directories.
func parseIgnore(data []byte) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		r.anchored = anchored
		switch {
		case !strings.ContainsAny(line, "*?[\\"):
			r.shape, r.text = shapeName, line
			rules = append(rules, r)
			continue
		case line[0] == '*' && !strings.ContainsAny(line[1:], "*?[\\/"):
			r.shape, r.text = shapeSuffix, line[1:]
			rules = append(rules, r)
			continue
		}
		expr := globRegexp(line)
		if !anchored {
			expr = "(?:.*/)?" + expr
		}
		re, err := regexp.Compile("(?s)^" + expr + "$") // (?s): a name may hold a newline
		if err != nil {
			continue // a pattern git would not understand either
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules
}

// globRegexp turns a gitignore glob into a regular expression.
func globRegexp(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "/**") && i+3 == len(glob):
			b.WriteString("/.*")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	return b.String()
}

// IgnoreSet is the .gitignore rules that apply in one directory: its own
// and its parents', the deepest last.
type IgnoreSet struct {
	parent *IgnoreSet
	dir    string // slash path of the directory whose .gitignore this is, relative to the walk's root
	rules  []ignoreRule
}

// NewIgnoreSet adds the .gitignore of directory dir (a slash path
// relative to the walk's root, "" for the root) to the rules in force
// above it (parent; nil at the root). The walk uses it, and so does
// bench/gitignore, which holds it against git check-ignore and go-git.
func NewIgnoreSet(parent *IgnoreSet, dir string, gitignore []byte) *IgnoreSet {
	return &IgnoreSet{parent: parent, dir: dir, rules: parseIgnore(gitignore)}
}

// Ignored reports whether rel (slash path relative to the walk's root)
// is ignored: the last rule that matches decides.
func (s *IgnoreSet) Ignored(rel string, isDir bool) bool {
	for ; s != nil; s = s.parent {
		sub := rel
		if s.dir != "" {
			if !strings.HasPrefix(rel, s.dir+"/") {
				continue
			}
			sub = rel[len(s.dir)+1:]
		}
		for i := len(s.rules) - 1; i >= 0; i-- {
			r := s.rules[i]
			if r.dirOnly && !isDir || !r.match(sub) {
				continue
			}
			return !r.negate
		}
	}
	return false
}
