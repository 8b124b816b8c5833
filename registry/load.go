package registry

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/keyguard/keyguard/keytmpl"
)

// Load reads and validates a registry file, within the default Limits.
func Load(path string) (*Registry, error) { return LoadLimited(path, Limits{}) }

// Parse validates registry YAML, within the default Limits. file names
// the source in errors. Every problem is reported, each with line and
// column; the error is an ErrorList.
func Parse(file string, data []byte) (*Registry, error) { return ParseLimited(file, data, Limits{}) }

func parse(file string, data []byte) (*Registry, error) {
	d := &decoder{file: file}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var se *yaml.SyntaxError
		if errors.As(err, &se) && se.Token != nil {
			return nil, ErrorList{{Pos: d.pos(se.Token), Msg: "YAML syntax: " + se.Message, Hint: "check the indentation and quoting on this line; a template with braces can be quoted: key: \"a:{id}\""}}
		}
		return nil, ErrorList{{Pos: Pos{File: file}, Msg: "YAML syntax: " + err.Error()}}
	}
	raw := &rawRegistry{}
	var body ast.Node
	if len(f.Docs) > 0 {
		body = unwrap(f.Docs[0].Body)
	}
	if len(f.Docs) > 1 {
		d.errAt(f.Docs[1].Body, "more than one YAML document", "keep one registry per file")
	}
	switch body.(type) {
	case nil:
		d.errs = append(d.errs, &ParseError{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "empty registry", Hint: "start with\nversion: 1\nkeys:\n  - key: \"order:order:{orderId:int}:base\"\n    type: hash\n    ttl: 1h"})
	case *ast.SequenceNode:
		raw.bare = true
		raw.version = 1
		d.entries(body, raw)
	default:
		d.top(body, raw)
	}
	reg := d.build(raw)
	if len(d.errs) > 0 {
		d.errs.sort()
		return nil, d.errs
	}
	return reg, nil
}

type decoder struct {
	file string
	errs ErrorList
}

type rawRegistry struct {
	bare      bool
	version   int
	sep       string
	sepNode   ast.Node
	env       string
	envNode   ast.Node
	policy    Policy
	hasPolicy map[string]bool
	domains   []Domain
	entries   []rawEntry
}

type rawEntry struct {
	Entry
	node       ast.Node
	keyNode    ast.Node
	fields     map[string]ast.Node
	ttlSet     bool
	deprecated string
}

func (d *decoder) pos(tk *token.Token) Pos {
	if tk == nil || tk.Position == nil {
		return Pos{File: d.file}
	}
	return Pos{File: d.file, Line: tk.Position.Line, Col: tk.Position.Column}
}

func (d *decoder) posOf(n ast.Node) Pos {
	if n == nil {
		return Pos{File: d.file}
	}
	return d.pos(n.GetToken())
}

func (d *decoder) errAt(n ast.Node, msg, hint string) {
	d.errs = append(d.errs, &ParseError{Pos: d.posOf(n), Msg: msg, Hint: hint})
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.CommentGroupNode, *ast.CommentNode:
			return nil
		case *ast.DocumentNode:
			n = v.Body
		default:
			return n
		}
	}
}

// pairs returns the key/value pairs of a mapping node, reporting anything
// else. A one-pair mapping is a MappingValueNode in this parser.
func (d *decoder) pairs(n ast.Node, what, example string) []*ast.MappingValueNode {
	switch v := unwrap(n).(type) {
	case *ast.MappingNode:
		return v.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}
	case nil:
		return nil
	case *ast.NullNode:
		return nil
	default:
		d.errAt(n, what+" must be a mapping", example)
		return nil
	}
}

// fields walks a mapping, calling set for known fields and reporting
// unknown and duplicate ones.
func (d *decoder) fields(n ast.Node, what, example string, known []string, set func(name string, v ast.Node)) {
	seen := map[string]bool{}
	for _, p := range d.pairs(n, what, example) {
		name := scalarKey(p.Key)
		if seen[name] {
			d.errAt(p.Key, fmt.Sprintf("%s: field %q given twice", what, name), "keep one")
			continue
		}
		seen[name] = true
		if !contains(known, name) {
			hint := "known fields: " + strings.Join(known, ", ")
			if c := closest(name, known); c != "" {
				hint = fmt.Sprintf("did you mean %q? (%s)", c, hint)
			}
			d.errAt(p.Key, fmt.Sprintf("%s: unknown field %q", what, name), hint)
			continue
		}
		if _, isAlias := unwrap(p.Value).(*ast.AliasNode); isAlias {
			d.errAt(p.Value, fmt.Sprintf("%s: YAML aliases are not supported", what), "write the value out")
			continue
		}
		set(name, p.Value)
	}
}

func scalarKey(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	if s, ok := scalar(k); ok {
		return s
	}
	return k.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns the text of a scalar node.
func scalar(n ast.Node) (string, bool) {
	switch v := unwrap(n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	case *ast.NullNode:
		return "", true
	}
	return "", false
}

func (d *decoder) str(n ast.Node, field string) string {
	s, ok := scalar(n)
	if !ok {
		d.errAt(n, fmt.Sprintf("%s must be a plain value, not a list or mapping", field), "")
	}
	return s
}

func (d *decoder) boolean(n ast.Node, field string) bool {
	s, ok := scalar(n)
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true
	case "false", "no", "off", "":
		return false
	}
	_ = ok
	d.errAt(n, fmt.Sprintf("%s: %q is not true or false", field, s), field+": true")
	return false
}

func (d *decoder) integer(n ast.Node, field string) int64 {
	s, _ := scalar(n)
	v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil || v < 0 {
		d.errAt(n, fmt.Sprintf("%s: %q is not a whole number of zero or more", field, s), field+": 1048576")
		return 0
	}
	return v
}

// duration reads a duration as ParseDuration does ("10m", "1h30m", "7d")
// or whole seconds ("600").
func (d *decoder) duration(n ast.Node, field string) time.Duration {
	s, _ := scalar(n)
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 && v <= math.MaxInt64/int64(time.Second) {
		return time.Duration(v) * time.Second
	}
	v, err := ParseDuration(s)
	if err != nil || v < 0 {
		d.errAt(n, fmt.Sprintf("%s: %q is not a duration", field, s), "write 10m, 1h30m, 7d, or whole seconds such as 600")
		return 0
	}
	if v%time.Second != 0 && v > time.Second {
		d.errAt(n, fmt.Sprintf("%s: %q is not a whole number of seconds", field, s), "Redis TTLs set by keyguard are in seconds; round it")
	}
	return v
}

func (d *decoder) strings(n ast.Node, field string) []string {
	seq, ok := unwrap(n).(*ast.SequenceNode)
	if !ok {
		if s, ok := scalar(n); ok && s != "" {
			return []string{s}
		}
		d.errAt(n, field+" must be a list", field+": [auth-service, sms-service]")
		return nil
	}
	var out []string
	for _, v := range seq.Values {
		out = append(out, d.str(v, field))
	}
	return out
}

var (
	topFields    = []string{"version", "separator", "env", "policy", "domains", "keys"}
	policyFields = []string{"max_key_bytes", "require_ttl", "big_key_bytes", "big_key_elements"}
	domainFields = []string{"owner", "desc"}
	entryFields  = []string{"key", "name", "type", "ttl", "ttl_jitter", "persistent", "owner", "desc", "guard", "hot", "writers", "readers", "pii", "deprecated", "domain", "entityType", "attribute", "fields", "fields_extra"}
	hotFields    = []string{"replicas", "local_ttl"}
	deprFields   = []string{"replaced_by"}
)

func (d *decoder) top(n ast.Node, raw *rawRegistry) {
	raw.hasPolicy = map[string]bool{}
	var keysNode ast.Node
	d.fields(n, "registry", "version: 1\nkeys: [...]", topFields, func(name string, v ast.Node) {
		switch name {
		case "version":
			raw.version = int(d.integer(v, "version"))
			if raw.version != 1 {
				d.errAt(v, fmt.Sprintf("version %d is not supported", raw.version), "version: 1")
			}
		case "separator":
			raw.sep, raw.sepNode = d.str(v, "separator"), v
		case "env":
			raw.env, raw.envNode = d.str(v, "env"), v
		case "policy":
			d.fields(v, "policy", "policy: {max_key_bytes: 64}", policyFields, func(name string, v ast.Node) {
				raw.hasPolicy[name] = true
				switch name {
				case "max_key_bytes":
					raw.policy.MaxKeyBytes = int(d.integer(v, name))
				case "require_ttl":
					raw.policy.RequireTTL = d.boolean(v, name)
				case "big_key_bytes":
					raw.policy.BigKeyBytes = d.integer(v, name)
				case "big_key_elements":
					raw.policy.BigKeyElements = d.integer(v, name)
				}
			})
		case "domains":
			for _, p := range d.pairs(v, "domains", "domains:\n  order: {owner: order-team, desc: 订单域}") {
				dom := Domain{Name: scalarKey(p.Key), Pos: d.posOf(p.Key)}
				nodes := map[string]ast.Node{}
				d.fields(p.Value, "domain "+dom.Name, "order: {owner: order-team}", domainFields, func(name string, v ast.Node) {
					nodes[name] = v
					switch name {
					case "owner":
						dom.Owner = d.str(v, "owner")
					case "desc":
						dom.Desc = d.str(v, "desc")
					}
				})
				dom.fieldPos = d.fieldPositions(nodes)
				raw.domains = append(raw.domains, dom)
			}
		case "keys":
			keysNode = v
		}
	})
	if raw.version == 0 {
		d.errs = append(d.errs, &ParseError{Pos: d.posOf(n), Msg: "no version", Hint: "add version: 1 at the top"})
	}
	if keysNode != nil {
		d.entries(keysNode, raw)
	}
}

func (d *decoder) entries(n ast.Node, raw *rawRegistry) {
	seq, ok := unwrap(n).(*ast.SequenceNode)
	if !ok {
		if _, null := unwrap(n).(*ast.NullNode); !null && unwrap(n) != nil {
			d.errAt(n, "keys must be a list of entries", "keys:\n  - key: \"order:order:{orderId:int}:base\"")
		}
		return
	}
	for _, item := range seq.Values {
		e := rawEntry{node: item, fields: map[string]ast.Node{}}
		e.Pos = d.posOf(item)
		d.fields(item, "key entry", "- key: \"order:order:{orderId:int}:base\"\n  ttl: 1h", entryFields, func(name string, v ast.Node) {
			e.fields[name] = v
			switch name {
			case "key":
				e.Key, e.keyNode = d.str(v, "key"), v
				e.Pos = d.posOf(v)
			case "name":
				e.Name = d.str(v, name)
			case "type":
				e.Type = d.str(v, name)
				if !contains(Types, e.Type) {
					hint := "one of " + strings.Join(Types, ", ")
					if c := closest(e.Type, Types); c != "" {
						hint = fmt.Sprintf("did you mean %q? (%s)", c, hint)
					}
					d.errAt(v, fmt.Sprintf("type %q is not a Redis type keyguard knows", e.Type), hint)
				}
			case "ttl":
				e.TTL, e.ttlSet = d.duration(v, name), true
			case "ttl_jitter":
				e.TTLJitter = d.duration(v, name)
			case "persistent":
				e.Persistent = d.boolean(v, name)
			case "owner":
				e.Owner, e.explicitOwner = d.str(v, name), true
			case "desc":
				e.Desc = d.str(v, name)
			case "guard":
				e.Guard = d.boolean(v, name)
			case "hot":
				e.Hot = &Hot{}
				d.fields(v, "hot", "hot: {replicas: 10, local_ttl: 10s}", hotFields, func(name string, v ast.Node) {
					switch name {
					case "replicas":
						e.Hot.Replicas = int(d.integer(v, name))
					case "local_ttl":
						e.Hot.LocalTTL = d.duration(v, name)
					}
				})
			case "writers":
				e.Writers = d.strings(v, name)
			case "readers":
				e.Readers = d.strings(v, name)
			case "pii":
				switch s := d.str(v, name); s {
				case "allow":
					e.PIIAllow = true
				case "", "deny":
				default:
					d.errAt(v, fmt.Sprintf("pii: %q is not allow", s), "pii: allow (a reviewed decision to keep personal data in this key)")
				}
			case "deprecated":
				e.Deprecated = &Deprecated{}
				d.fields(v, "deprecated", "deprecated: {replaced_by: \"new:template:{id}\"}", deprFields, func(name string, v ast.Node) {
					e.Deprecated.ReplacedBy = d.str(v, name)
				})
			case "domain":
				e.Domain = d.str(v, name)
			case "entityType":
				e.EntityType = d.str(v, name)
			case "attribute":
				e.Attribute = d.str(v, name)
			case "fields":
				e.Fields = d.strings(v, name)
			case "fields_extra":
				switch s := d.str(v, name); s {
				case "allow":
					e.FieldsExtra = true
				case "", "deny":
				default:
					d.errAt(v, fmt.Sprintf("fields_extra: %q is not allow", s), "fields_extra: allow (the value may hold fields beyond those listed, e.g. a per-user map)")
				}
			}
		})
		if e.keyNode == nil {
			d.errAt(item, "key entry without a key", "add key: \"domain:entity:{id}:attr\"")
			continue
		}
		raw.entries = append(raw.entries, e)
	}
}

// build turns the raw file into a Registry, checking what needs the whole
// file: separator, templates, names, types, owners.
func (d *decoder) build(raw *rawRegistry) *Registry {
	r := &Registry{File: d.file, Version: raw.version, Separator: ':', Env: raw.env, BareList: raw.bare, domainIdx: map[string]*Domain{}}
	if raw.sep != "" {
		if len(raw.sep) != 1 || raw.sep == "{" || raw.sep == "}" || raw.sep[0] <= ' ' || raw.sep[0] >= 0x7f {
			d.errAt(raw.sepNode, fmt.Sprintf("separator %q: must be one printable ASCII character other than a brace", raw.sep), "separator: \":\"")
		} else {
			r.Separator = raw.sep[0]
		}
	}
	if raw.env != "" && (strings.IndexByte(raw.env, r.Separator) >= 0 || strings.ContainsAny(raw.env, "{} \t\n")) {
		d.errAt(raw.envNode, fmt.Sprintf("env %q may not contain the separator, braces or spaces", raw.env), "env: prod")
	}
	r.Policy = Policy{MaxKeyBytes: DefaultMaxKeyBytes, RequireTTL: true, BigKeyBytes: DefaultBigKeyBytes, BigKeyElements: DefaultBigKeyElements}
	if raw.hasPolicy["max_key_bytes"] {
		r.Policy.MaxKeyBytes = raw.policy.MaxKeyBytes
	}
	if raw.hasPolicy["require_ttl"] {
		r.Policy.RequireTTL = raw.policy.RequireTTL
	}
	if raw.hasPolicy["big_key_bytes"] {
		r.Policy.BigKeyBytes = raw.policy.BigKeyBytes
	}
	if raw.hasPolicy["big_key_elements"] {
		r.Policy.BigKeyElements = raw.policy.BigKeyElements
	}
	r.Domains = raw.domains
	if raw.bare { // seed 000 §5.2: the entries' domain fields declare the domains
		seen := map[string]bool{}
		for _, e := range raw.entries {
			if e.Domain != "" && !seen[e.Domain] {
				seen[e.Domain] = true
				r.Domains = append(r.Domains, Domain{Name: e.Domain, Owner: e.Owner, Pos: e.Pos})
			}
		}
	}
	for i := range r.Domains {
		r.domainIdx[r.Domains[i].Name] = &r.Domains[i]
	}
	var ts []*keytmpl.Template
	names := map[string]*rawEntry{}
	for i := range raw.entries {
		re := &raw.entries[i]
		full := re.Key
		if r.Env != "" {
			full = r.Env + string(r.Separator) + re.Key
		}
		t, err := keytmpl.Parse(full, r.Separator)
		if err != nil {
			var se *keytmpl.SyntaxError
			pos := d.posOf(re.keyNode)
			msg := err.Error()
			if errors.As(err, &se) {
				off := se.Offset - (len(full) - len(re.Key))
				pos.Col += max(off, 0) + quoteWidth(re.keyNode)
				msg = fmt.Sprintf("template %q: %s", re.Key, se.Msg)
			}
			d.errs = append(d.errs, &ParseError{Pos: pos, Msg: msg, Hint: "placeholders are {name} or {name:int|hex|uuid|region|date|hash|enum(A,B)}; a literal brace is written {{ or }}"})
			continue
		}
		e := re.Entry
		e.Template = t
		e.fieldPos = d.fieldPositions(re.fields)
		e.quietUnder = quietUnder(t, e.PIIAllow)
		e.piiScan = piiScan(t, e.PIIAllow)
		e.slotScan, e.slotUnder = slotScan(t, e.PIIAllow)
		e.Index = len(r.Entries)
		if e.Type == "" {
			e.Type = "string"
		}
		first, _ := t.Segments()[0].Literal()
		if r.Env != "" && len(t.Segments()) > 1 {
			first, _ = t.Segments()[1].Literal()
		}
		if e.Domain == "" {
			e.Domain = domainOf(first)
		}
		if !e.explicitOwner {
			if dom := r.domainIdx[e.Domain]; dom != nil {
				e.Owner = dom.Owner
			}
		}
		if e.Name != "" && !validName(e.Name) {
			d.errAt(re.fields["name"], fmt.Sprintf("name %q is not an identifier", e.Name), "use letters, digits and '_', starting with a letter, e.g. name: OrderBase")
		}
		if e.Name != "" {
			if prev := names[e.Name]; prev != nil {
				d.errAt(re.fields["name"], fmt.Sprintf("name %q is already used by %q (line %d)", e.Name, prev.Key, prev.Pos.Line), "give each entry its own name")
			}
			names[e.Name] = re
		}
		d.checkFields(re, &e)
		if e.Deprecated != nil && e.Deprecated.ReplacedBy == "" {
			d.errAt(re.fields["deprecated"], "deprecated without replaced_by", "deprecated: {replaced_by: \"new:template:{id}\"}")
		}
		ep := new(Entry)
		*ep = e
		r.copies = r.copies || ep.keepsCopies()
		r.Entries = append(r.Entries, ep)
		ts = append(ts, t)
	}
	for _, e := range r.Entries {
		if e.Deprecated != nil && e.Deprecated.ReplacedBy != "" && r.entryByKey(e.Deprecated.ReplacedBy) == nil {
			d.errs = append(d.errs, &ParseError{Pos: e.Pos, Msg: fmt.Sprintf("deprecated: replaced_by %q is not a key of this registry", e.Deprecated.ReplacedBy), Hint: "declare the new template as its own entry first"})
		}
	}
	r.matcher = keytmpl.Compile(ts)
	r.Digest = digest(r)
	return r
}

// fieldPositions is where each field's value is written, and each item
// of a list as name[i] ("writers[1]"), for findings about one field. A
// value without a position of its own (an empty "desc:") is left out:
// FieldPos then gives the entry's.
func (d *decoder) fieldPositions(nodes map[string]ast.Node) map[string]Pos {
	out := make(map[string]Pos, len(nodes))
	add := func(name string, n ast.Node) {
		if p := d.posOf(n); p.Line > 0 {
			out[name] = p
		}
	}
	for name, n := range nodes {
		add(name, n)
		if seq, ok := unwrap(n).(*ast.SequenceNode); ok {
			for i, v := range seq.Values {
				add(name+"["+strconv.Itoa(i)+"]", v)
			}
		}
	}
	return out
}

func (r *Registry) entryByKey(key string) *Entry {
	for _, e := range r.Entries {
		if e.Key == key {
			return e
		}
	}
	return nil
}

// EntryByKey returns the entry whose template is written key.
func (r *Registry) EntryByKey(key string) *Entry { return r.entryByKey(key) }

func quoteWidth(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 0
	}
	switch n.GetToken().Type {
	case token.DoubleQuoteType, token.SingleQuoteType:
		return 1
	}
	return 0
}

// domainOf is the domain a first segment names: a Cluster hash tag's
// opening brace ("{order:1001}:items") is not part of it.
func domainOf(first string) string { return strings.TrimPrefix(first, "{") }

func validName(s string) bool {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// checkFields validates a declared value format: field names are
// non-empty and distinct, the type can hold fields (a hash, or a string
// holding a JSON object), and a guarded hash leaves __ns__ to the guard.
func (d *decoder) checkFields(re *rawEntry, e *Entry) {
	node := re.fields["fields"]
	if node == nil {
		if e.FieldsExtra {
			d.errAt(re.fields["fields_extra"], "fields_extra without fields", "list the fields every value holds: fields: [id, name], or drop fields_extra")
		}
		return
	}
	if e.Type != "hash" && e.Type != "string" {
		d.errAt(node, fmt.Sprintf("fields on a %s: only a hash (field names) or a string holding a JSON object (top-level keys) has fields", e.Type), "drop fields, or declare type: hash or type: string")
	}
	seen := map[string]bool{}
	for _, f := range e.Fields {
		switch {
		case f == "":
			d.errAt(node, "an empty field name", "list field names: fields: [activityId, discountType]")
		case f == NSField && e.Guard:
			d.errAt(node, "fields lists "+NSField+" on a guarded hash", "drop "+NSField+": the guard writes and checks it itself")
		case seen[f]:
			d.errAt(node, fmt.Sprintf("field %q is listed twice", f), "list each field once")
		}
		seen[f] = true
	}
}
