package keyshape

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/codegen"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// Lang is a source language, named as keyguard gen names it.
type Lang string

// Languages whose code is scanned. JavaScript uses the TypeScript builders.
const (
	Go         Lang = "go"
	Java       Lang = "java"
	Python     Lang = "python"
	TypeScript Lang = "ts"
)

// builderNames is the generated function of each entry per language, by
// entry index, as keyguard gen names them.
func builderNames(reg *registry.Registry) map[Lang][]string {
	out := map[Lang][]string{}
	for _, lang := range []Lang{Go, Java, Python, TypeScript} {
		names := make([]string, len(reg.Entries))
		for i, e := range reg.Entries {
			names[i] = codegen.FuncName(codegen.Lang(lang), e)
		}
		out[lang] = names
	}
	return out
}

// BuilderName is the generated function that builds e's keys in lang.
func (c *Classifier) BuilderName(lang Lang, e *registry.Entry) string {
	if lang == "" {
		lang = Go
	}
	return c.names[lang][e.Index]
}

// IsBuilder reports whether name is a generated builder function of lang
// taking n values.
func (c *Classifier) IsBuilder(lang Lang, name string, n int) bool {
	for i, bn := range c.names[lang] {
		if bn == name && len(c.entries[i].e.Template.Placeholders()) == n {
			return true
		}
	}
	return false
}

// Call writes the builder call that replaces s for e in lang, with the
// shape's values as arguments, or "" when the shape does not line up.
func (c *Classifier) Call(lang Lang, s Shape, e *registry.Entry) string {
	args, ok := c.Args(s, e)
	if !ok {
		return ""
	}
	holes := holeParts(s)
	var as []string
	for _, a := range args {
		if a.Hole >= 0 {
			h := holes[a.Hole]
			expr := h.Expr
			if expr == "" {
				expr = h.Name
			}
			if expr == "" {
				return ""
			}
			as = append(as, expr)
			continue
		}
		as = append(as, literalArg(lang, a))
	}
	name := c.BuilderName(lang, e)
	switch lang {
	case Java:
		return "Keys." + name + "(" + strings.Join(as, ", ") + ").key()"
	case Python:
		return "keys." + name + "(" + strings.Join(as, ", ") + ")"
	case TypeScript:
		return "keys." + name + "(" + strings.Join(as, ", ") + ").key"
	default:
		for _, ph := range e.Template.Placeholders() {
			if ph.Kind != keytmpl.Int {
				// Such a builder also returns an error for a value the template refuses.
				return "keys." + name + "(" + strings.Join(as, ", ") + ")"
			}
		}
		return "keys." + name + "(" + strings.Join(as, ", ") + ").String()"
	}
}

func holeParts(s Shape) []Part {
	var out []Part
	for _, p := range s.Parts {
		if p.Hole {
			out = append(out, p)
		}
	}
	return out
}

func literalArg(lang Lang, a Arg) string {
	if a.Placeholder.Kind == keytmpl.Int {
		if lang == Java {
			return a.Lit + "L"
		}
		return a.Lit
	}
	if lang == Python {
		return "'" + strings.ReplaceAll(a.Lit, "'", `\'`) + "'"
	}
	return strconv.Quote(a.Lit)
}

// Finding turns a shape into the finding a scan reports, without a
// position; "" verdicts (a builder's key) never reach here.
func (c *Classifier) Finding(lang Lang, s Shape) finding.Finding {
	v := c.Classify(s)
	f := finding.Finding{Rule: v.Rule, Template: s.String()}
	shown := finding.Display(s.String())
	switch {
	case v.Rule == finding.UnregisteredCode:
		f.Severity = finding.Error
		f.Message = fmt.Sprintf("key %s matches no template of the registry", shown)
		f.Hint = "declare the template in the registry (keyguard scan-code --suggest writes the entry), or build a registered key with the generated builder"
	case len(v.Fits) > 0:
		e := v.Fits[0]
		f.Severity = finding.Warning
		f.Owner = e.Owner
		f.Message = fmt.Sprintf("key %s is built by hand; it is a key of %q (owner %s)", shown, e.Key, e.Owner)
		if len(v.Fits) > 1 {
			f.Message += " and of " + human.Plural(len(v.Fits)-1, "more template")
		}
		if call := c.Call(lang, s, e); call != "" {
			f.Hint = "build it with the generated builder: " + call
		} else {
			f.Hint = "build it with the generated builder " + c.BuilderName(lang, e) + " (keyguard gen --lang " + string(langOrGo(lang)) + ")"
		}
	case len(v.Possible) > 0:
		f.Severity = finding.Warning
		var ts []string
		for i, e := range v.Possible {
			if i == 3 {
				ts = append(ts, fmt.Sprintf("%d more", len(v.Possible)-3))
				break
			}
			ts = append(ts, strconv.Quote(e.Key))
		}
		f.Message = fmt.Sprintf("key %s is built by hand and its end is not visible here; it may be a key of %s", shown, strings.Join(ts, ", "))
		f.Hint = "build the whole key with the generated builder (keyguard gen), so it is checked where it is made"
	default:
		f.Severity = finding.Warning
		f.Hint = "pass the key of a generated builder (keyguard gen), or build the key in this function"
		if len(s.Parts) == 1 {
			what := "its value"
			if s.Parts[0].Expr != "" {
				what = s.Parts[0].Expr
			}
			f.Message = fmt.Sprintf("key is not built by the generated builder: %s comes from where the scan cannot follow it", finding.Display(what))
			break
		}
		// Several pieces: the key's shape, and the values that cannot be
		// followed, by their source text where it is short.
		var what []string
		for _, p := range holeParts(s) {
			if p.Expr != "" && len(what) < 3 {
				what = append(what, finding.Display(p.Expr))
			}
		}
		if len(what) == 0 {
			f.Message = fmt.Sprintf("key %s is not built by the generated builder: its pieces come from where the scan cannot follow them", shown)
			break
		}
		verb := "come from where the scan cannot follow them"
		if len(what) == 1 {
			verb = "comes from where the scan cannot follow it"
		}
		f.Message = fmt.Sprintf("key %s is not built by the generated builder: %s %s", shown, strings.Join(what, ", "), verb)
	}
	return f
}

func langOrGo(l Lang) Lang {
	if l == "" {
		return Go
	}
	return l
}
