package codegen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// model is what the language templates render: the registry with every
// name already chosen and checked for collisions.
type model struct {
	Source      string
	Package     string
	Separator   string
	MaxKeyBytes int
	Entries     []*entry
	UsesTime    bool // the Go file needs package time
	Example     *entry
	// FieldsExample is the first entry that declares fields; nil when none does.
	FieldsExample *entry
}

type entry struct {
	Index      int
	Name       string // Go and enum-type prefix: PromoSkuActivity
	Camel      string // Java/TS method: promoSkuActivity
	Snake      string // Python function: promo_sku_activity
	Upper      string // constants: PROMO_SKU_ACTIVITY
	Template   string // env prefix included
	Desc       []string
	Type       string
	Owner      string
	TTL        time.Duration
	Jitter     time.Duration
	Persistent bool
	Guard      bool
	Writers    []string
	Readers    []string
	HotReps    int
	HotTTL     time.Duration
	Policy     string   // one-line summary for doc comments
	Notes      []string // overlaps, deprecation
	Parts      []part
	Params     []*param
	Enums      []*enum
	Infallible bool // Go: every value is an int64 and the longest key fits
	Deprecated bool
	// Fields is the declared value format (registry fields), in registry
	// order; FieldsExtra says the set is open (fields_extra: allow).
	Fields      []*field
	FieldsExtra bool
	spec        keybuild.Spec
}

// field is one declared field of a template's value and its constants.
type field struct {
	Name  string // as in the registry: activityId
	Go    string // PromoSkuFieldActivityId
	Upper string // PROMO_SKU_FIELD_ACTIVITY_ID, for Java, Python and TypeScript
}

type part struct {
	Lit   string
	Param *param // nil for literal text
}

type param struct {
	Name  string // as in the template
	Kind  keybuild.Kind
	Go    string
	Camel string // Java, TypeScript
	Snake string // Python
	Enum  *enum
}

type enum struct {
	Type        string // VerifySMSScene
	Template    string
	Placeholder string
	Values      []enumValue
}

type enumValue struct {
	Value string // LOGIN
	Go    string // VerifySMSSceneLogin
	Upper string // LOGIN, for Java/Python/TypeScript members
}

// KindName is the placeholder kind as the template language writes it.
func (p *param) KindName() string { return p.Kind.String() }

// GoKind is the keybuild constant of the kind.
func (p *param) GoKind() string { return "keybuild.Kind" + goKindSuffix[p.Kind] }

var goKindSuffix = [...]string{keybuild.KindAny: "Any", keybuild.KindInt: "Int", keybuild.KindHex: "Hex", keybuild.KindUUID: "UUID",
	keybuild.KindRegion: "Region", keybuild.KindDate: "Date", keybuild.KindEnum: "Enum", keybuild.KindHash: "Hash"}

func kindOf(k keytmpl.Kind) keybuild.Kind {
	return map[keytmpl.Kind]keybuild.Kind{keytmpl.Any: keybuild.KindAny, keytmpl.Int: keybuild.KindInt, keytmpl.Hex: keybuild.KindHex,
		keytmpl.UUID: keybuild.KindUUID, keytmpl.Region: keybuild.KindRegion, keytmpl.Date: keybuild.KindDate,
		keytmpl.Enum: keybuild.KindEnum, keytmpl.Hash: keybuild.KindHash}[k]
}

// names checks that each language's identifiers are unique.
type names struct {
	reg  *registry.Registry
	errs registry.ErrorList
	seen map[string]map[string]*registry.Entry // lang → identifier → entry (nil: fixed name)
}

func (n *names) declare(lang, id string, e *registry.Entry, what string) {
	if n.seen[lang] == nil {
		n.seen[lang] = map[string]*registry.Entry{}
	}
	prev, dup := n.seen[lang][id]
	n.seen[lang][id] = e
	if !dup {
		return
	}
	other := "a name the generated " + lang + " code uses itself"
	if prev != nil {
		other = fmt.Sprintf("%q (line %d)", prev.Key, prev.Pos.Line)
	}
	if e == nil {
		return
	}
	n.errs = append(n.errs, &registry.ParseError{Pos: e.Pos,
		Msg:  fmt.Sprintf("gen: %s %s of %q collides with %s in %s", what, id, e.Key, other, lang),
		Hint: "give the entry its own name: field (a name in PascalCase, e.g. name: OrderBase)"})
}

func buildModel(reg *registry.Registry, opt Options) (*model, error) {
	m := &model{Source: opt.Source, Package: opt.Package, Separator: string(reg.Separator), MaxKeyBytes: reg.Policy.MaxKeyBytes}
	n := &names{reg: reg, seen: map[string]map[string]*registry.Entry{}}
	for _, id := range []string{"Separator", "MaxKeyBytes", "Templates"} {
		n.declare("Go", id, nil, "")
	}
	for _, id := range []string{"SEPARATOR", "MAX_KEY_BYTES", "TEMPLATES", "Template", "Key", "Part", "Kind", "KeyBuildException", "Keys"} {
		n.declare("Java", id, nil, "")
	}
	for _, id := range []string{"SEPARATOR", "MAX_KEY_BYTES", "TEMPLATES", "Template", "Key", "Part", "KeyBuildError", "Value", "build", "hash_value"} {
		n.declare("Python", id, nil, "")
	}
	for _, id := range []string{"SEPARATOR", "MAX_KEY_BYTES", "TEMPLATES", "Template", "Key", "Part", "Kind", "KeyBuildError", "Value", "build", "hashValue"} {
		n.declare("TypeScript", id, nil, "")
	}
	overlaps := overlapNotes(reg)
	for _, re := range reg.Entries {
		e, err := newEntry(reg, re, n)
		if err != nil {
			n.errs = append(n.errs, err)
			continue
		}
		e.Notes = append(e.Notes, overlaps[re.Index]...)
		m.Entries = append(m.Entries, e)
		if e.TTL != 0 || e.Jitter != 0 || e.HotTTL != 0 {
			m.UsesTime = true
		}
		if m.FieldsExample == nil && len(e.Fields) > 0 {
			m.FieldsExample = e
		}
	}
	if len(n.errs) > 0 {
		return nil, n.errs
	}
	if len(m.Entries) == 0 {
		return nil, registry.ErrorList{{Pos: registry.Pos{File: reg.File}, Msg: "gen: the registry declares no keys", Hint: "add entries under keys:"}}
	}
	m.Example = m.Entries[0]
	for _, e := range m.Entries {
		if len(e.Params) > 0 && e.Infallible {
			m.Example = e
			break
		}
	}
	return m, nil
}

func newEntry(reg *registry.Registry, re *registry.Entry, n *names) (*entry, *registry.ParseError) {
	if re.Name != "" && !validName(re.Name) {
		return nil, &registry.ParseError{Pos: re.Pos, Msg: fmt.Sprintf("gen: name %q of %q is not an identifier", re.Name, re.Key),
			Hint: "write the name in PascalCase: a letter, then letters, digits or '_' (e.g. name: PromoSkuActivity)"}
	}
	ws := nameWords(re)
	e := &entry{
		Index: re.Index, Name: pascal(ws), Camel: camel(ws), Snake: snake(ws), Upper: upperSnake(ws),
		Template: re.Template.String(), Type: re.Type, Owner: re.Owner, TTL: re.TTL, Jitter: re.TTLJitter,
		Persistent: re.Persistent, Guard: re.Guard, Writers: re.Writers, Readers: re.Readers,
	}
	if d := strings.TrimSpace(re.Desc); d != "" {
		e.Desc = strings.Split(d, "\n")
	}
	if re.Hot != nil {
		e.HotReps, e.HotTTL = re.Hot.Replicas, re.Hot.LocalTTL
	}
	if re.Deprecated != nil {
		e.Deprecated = true
		e.Notes = append(e.Notes, fmt.Sprintf("Deprecated: use the builder of %q.", re.Deprecated.ReplacedBy))
	}
	n.declare("Go", e.Name, re, "builder")
	n.declare("Go", "spec"+e.Name, re, "table entry")
	n.declare("Java", e.Camel, re, "builder")
	n.declare("Java", e.Upper, re, "template constant")
	n.declare("Java", e.Upper+"_TTL", re, "TTL constant")
	n.declare("Python", e.Snake, re, "builder")
	n.declare("Python", e.Upper, re, "template constant")
	n.declare("TypeScript", e.Camel, re, "builder")
	n.declare("TypeScript", e.Upper, re, "template constant")

	for _, kp := range flatten(re.Template) {
		if kp.Name == "" {
			e.Parts = append(e.Parts, part{Lit: kp.Lit})
			continue
		}
		pw := words(kp.Name)
		if len(pw) == 0 {
			pw = []string{"v"}
		}
		pa := &param{Name: kp.Name, Kind: kp.Kind, Go: kp.Name, Camel: camel(pw), Snake: snake(pw)}
		if kp.Kind == keybuild.KindEnum {
			en := &enum{Type: e.Name + pascal(pw), Template: e.Template, Placeholder: kp.Name}
			for _, lang := range []string{"Go", "Java", "Python", "TypeScript"} {
				n.declare(lang, en.Type, re, "enum type")
			}
			members := map[string]bool{}
			for i, v := range kp.Enum {
				vw := words(v)
				ev := enumValue{Value: v, Go: en.Type + title(vw), Upper: upperSnake(vw)}
				if len(vw) == 0 {
					ev.Go, ev.Upper = fmt.Sprintf("%sValue%d", en.Type, i), fmt.Sprintf("VALUE_%d", i)
				}
				if ev.Upper[0] >= '0' && ev.Upper[0] <= '9' {
					ev.Upper = "V_" + ev.Upper
				}
				n.declare("Go", ev.Go, re, "enum constant")
				if members[ev.Upper] {
					n.errs = append(n.errs, &registry.ParseError{Pos: re.Pos, Msg: fmt.Sprintf("gen: enum values of {%s} in %q give two members named %s", kp.Name, re.Key, ev.Upper),
						Hint: "use enum values that differ in more than punctuation or case"})
				}
				members[ev.Upper] = true
				en.Values = append(en.Values, ev)
			}
			pa.Enum = en
			e.Enums = append(e.Enums, en)
		}
		e.Params = append(e.Params, pa)
		e.Parts = append(e.Parts, part{Param: pa})
	}
	if err := e.nameParams(n, re); err != nil {
		return nil, err
	}
	if err := e.nameFields(n, re); err != nil {
		return nil, err
	}
	e.spec = specOf(reg, re, e.Name)
	e.Infallible = infallible(e, reg.Policy.MaxKeyBytes)
	e.Policy = policyLine(re)
	return e, nil
}

// nameParams escapes parameter names that are keywords or names the
// generated code uses, and rejects two that end up equal.
func (e *entry) nameParams(n *names, re *registry.Entry) *registry.ParseError {
	langs := []struct {
		lang     string
		reserved map[string]bool
		get      func(*param) *string
	}{
		{"Go", reservedGo(), func(p *param) *string { return &p.Go }},
		{"Java", reservedJava(), func(p *param) *string { return &p.Camel }},
		{"Python", reservedPython(), func(p *param) *string { return &p.Snake }},
		{"TypeScript", reservedTS(), func(p *param) *string { return &p.Camel }},
	}
	for _, l := range langs {
		used := map[string]bool{}
		for _, p := range e.Params {
			id := l.get(p)
			if l.reserved[*id] || hasKey(n.seen[l.lang], *id) {
				*id += "_"
			}
			if used[*id] {
				return &registry.ParseError{Pos: re.Pos, Msg: fmt.Sprintf("gen: two placeholders of %q give the %s parameter name %s", re.Key, l.lang, *id),
					Hint: "rename one placeholder so the names differ in more than case and underscores"}
			}
			used[*id] = true
		}
	}
	return nil
}

// nameFields gives each declared field its constants: the entry's name,
// "Field" and the field name's words ("activityId" of PromoSku gives
// PromoSkuFieldActivityId and PROMO_SKU_FIELD_ACTIVITY_ID). A field name
// without ASCII letters or digits is named by its position (PromoSkuField3).
// Two fields that give one constant are an error naming both, as two
// builders are: the constants must say which field they hold.
func (e *entry) nameFields(n *names, re *registry.Entry) *registry.ParseError {
	if len(re.Fields) == 0 {
		return nil
	}
	e.FieldsExtra = re.FieldsExtra
	goSeen, upSeen := map[string]string{}, map[string]string{}
	for i, name := range re.Fields {
		fw := words(name)
		f := &field{Name: name, Go: e.Name + "Field" + pascal(fw), Upper: e.Upper + "_FIELD_" + upperSnake(fw)}
		if len(fw) == 0 {
			f.Go, f.Upper = fmt.Sprintf("%sField%d", e.Name, i), fmt.Sprintf("%s_FIELD_%d", e.Upper, i)
		}
		for _, c := range []struct {
			seen      map[string]string
			id, langs string
		}{{goSeen, f.Go, "Go"}, {upSeen, f.Upper, "Java, Python and TypeScript"}} {
			if prev, dup := c.seen[c.id]; dup {
				return &registry.ParseError{Pos: re.Pos,
					Msg: fmt.Sprintf("gen: fields %q and %q of %q both give the %s constant %s", prev, name, re.Key, c.langs, c.id),
					Hint: "field names that differ only in case or punctuation cannot both have a constant; keep one spelling in the data and in fields, " +
						"or list one of them and set fields_extra: allow"}
			}
			c.seen[c.id] = name
		}
		n.declare("Go", f.Go, re, "field constant")
		for _, lang := range []string{"Java", "Python", "TypeScript"} {
			n.declare(lang, f.Upper, re, "field constant")
		}
		e.Fields = append(e.Fields, f)
	}
	n.declare("Go", e.Name+"Fields", re, "field list")
	n.declare("Go", e.Name+"FieldsExtra", re, "field set constant")
	for _, lang := range []string{"Java", "Python", "TypeScript"} {
		n.declare(lang, e.Upper+"_FIELDS", re, "field list")
		n.declare(lang, e.Upper+"_FIELDS_EXTRA", re, "field set constant")
	}
	return nil
}

// FieldsDoc says what the entry's fields are, for the comments of the
// constants.
func (e *entry) FieldsDoc() string {
	what := "the hash fields"
	if e.Type == "string" {
		what = "the top-level keys of the JSON object"
	}
	open := "A value holds no other field: keyguard's TTL policy (every language) and Go hook (enforce mode) refuse one, and keyguard audit reports it."
	if e.FieldsExtra {
		open = "Values may hold other fields too (fields_extra: allow)."
	}
	return fmt.Sprintf("Fields of %q: %s its values hold, as the registry declares them. %s", e.Template, what, open)
}

// FieldIDs returns the constants of the declared fields (Java, Python and
// TypeScript spelling).
func (e *entry) FieldIDs() []string {
	out := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f.Upper
	}
	return out
}

// FieldNames returns the declared field names.
func (e *entry) FieldNames() []string {
	out := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f.Name
	}
	return out
}

func hasKey(m map[string]*registry.Entry, k string) bool {
	_, ok := m[k]
	return ok
}

// nameWords are the words of an entry's builder names: its name field,
// or else the literal text of its template.
func nameWords(re *registry.Entry) []string {
	if validName(re.Name) {
		return words(re.Name)
	}
	return derivedWords(re)
}

// derivedWords names an entry from the literal text of its template
// (env prefix left out): "order:sku:{skuId:int}:settle-preview" gives
// Order, Sku, Settle, Preview.
func derivedWords(re *registry.Entry) []string {
	t := re.Template
	segs := t.Segments()
	// Key is the template without the registry's env prefix, Template
	// the one with it: they differ by the env segment.
	if len(t.String()) != len(re.Key) && len(segs) > 1 {
		segs = segs[1:]
	}
	var ws []string
	for _, s := range segs {
		for _, p := range s.Parts {
			if !p.IsPlaceholder() {
				ws = append(ws, words(p.Lit)...)
			}
		}
	}
	if len(ws) == 0 || ws[0][0] >= '0' && ws[0][0] <= '9' {
		ws = append([]string{"Key"}, ws...)
	}
	return ws
}

func specOf(reg *registry.Registry, re *registry.Entry, name string) keybuild.Spec {
	s := keybuild.Spec{
		Name: name, Template: re.Template.String(), Separator: reg.Separator, MaxKeyBytes: reg.Policy.MaxKeyBytes,
		Parts: flatten(re.Template), Type: re.Type, TTL: re.TTL, TTLJitter: re.TTLJitter, Persistent: re.Persistent,
		Owner: re.Owner, Writers: re.Writers, Readers: re.Readers, Guard: re.Guard, Desc: re.Desc,
		Fields: re.Fields, FieldsExtra: re.FieldsExtra,
	}
	if re.Hot != nil {
		s.HotReplicas, s.HotLocalTTL = re.Hot.Replicas, re.Hot.LocalTTL
	}
	return s
}

// flatten turns the segments of t into runs of literal text (separators
// included) and placeholders, the form the builders walk.
func flatten(t *keytmpl.Template) []keybuild.Part {
	var out []keybuild.Part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, keybuild.Part{Lit: lit.String()})
			lit.Reset()
		}
	}
	for si, s := range t.Segments() {
		if si > 0 {
			lit.WriteByte(t.Separator())
		}
		for _, p := range s.Parts {
			if !p.IsPlaceholder() {
				lit.WriteString(p.Lit)
				continue
			}
			flush()
			out = append(out, keybuild.Part{Name: p.Name, Kind: kindOf(p.Kind), Enum: p.Enum})
		}
	}
	flush()
	return out
}

// maxIntLen is the longest decimal int64.
const maxIntLen = 20

func infallible(e *entry, maxKeyBytes int) bool {
	n := 0
	for _, p := range e.Parts {
		switch {
		case p.Param == nil:
			n += len(p.Lit)
		case p.Param.Kind == keybuild.KindInt:
			n += maxIntLen
		default:
			return false
		}
	}
	return maxKeyBytes <= 0 || n <= maxKeyBytes
}

func policyLine(e *registry.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Redis type %s", e.Type)
	switch {
	case e.Persistent:
		b.WriteString(", persistent (no TTL)")
	case e.TTLJitter > 0:
		fmt.Fprintf(&b, ", TTL %s (+ up to %s jitter)", registry.FormatTTL(e.TTL), registry.FormatTTL(e.TTLJitter))
	default:
		fmt.Fprintf(&b, ", TTL %s", registry.FormatTTL(e.TTL))
	}
	if e.Owner != "" {
		fmt.Fprintf(&b, ", owner %s", e.Owner)
	}
	if len(e.Writers) > 0 {
		fmt.Fprintf(&b, ", also written by %s", strings.Join(e.Writers, ", "))
	}
	if len(e.Readers) > 0 {
		fmt.Fprintf(&b, ", read by %s", strings.Join(e.Readers, ", "))
	}
	if e.Guard {
		b.WriteString(", namespace-guarded")
	}
	if e.Hot != nil {
		fmt.Fprintf(&b, ", hot (%d replicas, local TTL %s)", e.Hot.Replicas, registry.FormatTTL(e.Hot.LocalTTL))
	}
	b.WriteString(".")
	return b.String()
}

func overlapNotes(reg *registry.Registry) map[int][]string {
	out := map[int][]string{}
	add := func(i, j int, witness string) {
		o := reg.Entries[j]
		out[i] = append(out[i], fmt.Sprintf("Overlap: some keys of this template are also keys of %q (owner %s), e.g. %q; keyguard lint reports it.", o.Template.String(), orNobody(o.Owner), witness))
	}
	for _, o := range reg.Overlaps() {
		if o.A >= len(reg.Entries) || o.B >= len(reg.Entries) {
			continue
		}
		add(o.A, o.B, o.Explanation.Witness)
		add(o.B, o.A, o.Explanation.Witness)
	}
	for i := range out {
		sort.Strings(out[i])
	}
	return out
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

// GoType is the Go type of the parameter.
func (p *param) GoType() string {
	switch {
	case p.Kind == keybuild.KindInt:
		return "int64"
	case p.Enum != nil:
		return p.Enum.Type
	}
	return "string"
}

// GoArg is the keybuild argument passing the parameter.
func (p *param) GoArg() string {
	switch {
	case p.Kind == keybuild.KindInt:
		return "keybuild.Int(" + p.Go + ")"
	case p.Enum != nil:
		return "keybuild.String(string(" + p.Go + "))"
	}
	return "keybuild.String(" + p.Go + ")"
}

// example is a typical value of the parameter, as text.
func (p *param) example() string {
	switch p.Kind {
	case keybuild.KindInt:
		return "1001"
	case keybuild.KindHash:
		return "13800138000"
	case keybuild.KindEnum:
		return p.Enum.Values[0].Value
	case keybuild.KindAny:
		return "abc"
	case keybuild.KindHex:
		return "65f1a2b3"
	}
	return keytmpl.ExampleValue(keytmpl.Kind(p.Kind), nil)
}

func (e *entry) exampleArgs(lit func(p *param) string) string {
	var out []string
	for _, p := range e.Params {
		out = append(out, lit(p))
	}
	return strings.Join(out, ", ")
}

// GoExample, JavaExample, PyExample and TSExample are calls of the builder
// with typical values, for the package documentation.
func (e *entry) GoExample() string {
	return e.exampleArgs(func(p *param) string {
		switch {
		case p.Kind == keybuild.KindInt:
			return p.example()
		case p.Enum != nil:
			return p.Enum.Values[0].Go
		}
		return strconv.Quote(p.example())
	})
}

func (e *entry) JavaExample() string {
	return e.exampleArgs(func(p *param) string {
		switch {
		case p.Kind == keybuild.KindInt:
			return p.example() + "L"
		case p.Enum != nil:
			return p.Enum.Type + "." + p.Enum.Values[0].Upper
		}
		return javaQuote(p.example())
	})
}

func (e *entry) PyExample() string {
	return e.exampleArgs(func(p *param) string {
		switch {
		case p.Kind == keybuild.KindInt:
			return p.example()
		case p.Enum != nil:
			return p.Enum.Type + "." + p.Enum.Values[0].Upper
		}
		return pyQuote(p.example())
	})
}

func (e *entry) TSExample() string {
	return e.exampleArgs(func(p *param) string {
		if p.Kind == keybuild.KindInt {
			return p.example()
		}
		return tsQuote(p.example())
	})
}

// ExampleKey is the key the example call builds.
func (e *entry) ExampleKey() string {
	var args []keybuild.Arg
	for _, p := range e.Params {
		args = append(args, keybuild.String(p.example()))
	}
	k, err := keybuild.Build(&e.spec, args...)
	if err != nil {
		return err.Error()
	}
	return k.String()
}

// JavaKind is the Keys.Kind constant of the parameter.
func (p *param) JavaKind() string { return strings.ToUpper(p.Kind.String()) }

// JavaType is the Java type of the parameter.
func (p *param) JavaType() string {
	switch {
	case p.Kind == keybuild.KindInt:
		return "long"
	case p.Enum != nil:
		return p.Enum.Type
	}
	return "String"
}

// JavaArg passes the parameter to Keys.build as text.
func (p *param) JavaArg() string {
	switch {
	case p.Kind == keybuild.KindInt:
		return "Long.toString(" + p.Camel + ")"
	case p.Enum != nil:
		return p.Camel + " == null ? null : " + p.Camel + ".value"
	}
	return p.Camel
}

// PyType is the Python type hint of the parameter.
func (p *param) PyType() string {
	switch {
	case p.Kind == keybuild.KindInt:
		return "int"
	case p.Enum != nil:
		return p.Enum.Type
	}
	return "str"
}

// Strings returns the enum's values.
func (en *enum) Strings() []string {
	out := make([]string, len(en.Values))
	for i, v := range en.Values {
		out[i] = v.Value
	}
	return out
}

// TSType is the TypeScript type of the parameter.
func (p *param) TSType() string {
	switch {
	case p.Kind == keybuild.KindInt:
		return "number | bigint"
	case p.Enum != nil:
		return p.Enum.Type
	}
	return "string"
}
