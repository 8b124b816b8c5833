package scancode

import (
	"strconv"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// A JavaScript library that takes the client as an option
// (this.client = opts.storeClient) declares no type for it: there the
// evidence is what the project does with the receiver. The usage of each
// receiver (a variable, this.field, variable.field, told apart by the
// scope that binds it) is read once per file.

// tsUsage is what the project calls on one receiver.
type tsUsage struct {
	// names are the Redis-only commands called on it or on a multi() or
	// pipeline() of it.
	names map[string]bool
	// exec: a multi() or pipeline() of it is executed.
	exec bool
	// scripts are the commands it defines with ioredis's
	// defineCommand(name, {numberOfKeys, lua}): name → number of keys,
	// -1 when not a literal.
	scripts map[string]int
}

// client is the usage rule: the receiver is a Redis client when it
// defines a Lua command, when two different Redis-only commands are
// called on it, or when one is and a multi() or pipeline() of it is
// executed.
func (u *tsUsage) client() bool {
	return len(u.scripts) > 0 || len(u.names) >= 2 || u.exec && len(u.names) >= 1
}

// redisOnly reports a Redis command with keys that objects other than a
// Redis client do not also have. Left out: what Map (get, set, delete),
// memcached (incr, decr, touch, append), lru and node caches (ttl, mget,
// mset, dump), etcd (watch), knex (del, migrate), arrays and strings
// (sort, substr) and the file system (exists, rename, copy, unlink) also
// have, and the script calls (eval, fcall), named as in other languages'
// runtimes. Commands without keys (keys, scan, ping) are never in.
func redisOnly(method string) bool {
	name := tsCommand(method)
	switch name {
	case "get", "set", "del", "append", "copy", "decr", "incr", "dump", "restore", "exists", "migrate", "move",
		"mget", "mset", "persist", "rename", "sort", "substr", "touch", "ttl", "type", "unlink", "watch",
		"eval", "eval_ro", "evalsha", "evalsha_ro", "fcall", "fcall_ro":
		return false
	}
	return !strings.Contains(name, ".") && commandKeys(name, 1, noInt) != nil
}

// tsUsages reads, once, what the file calls on each receiver.
func (f *srcFile) tsUsages() map[string]*tsUsage {
	if f.used != nil {
		return f.used
	}
	f.used = map[string]*tsUsage{}
	for _, call := range f.calls {
		fn := call.ChildByFieldName("function")
		if typeOf(fn) != "member_expression" {
			continue
		}
		method := f.text(fn.ChildByFieldName("property"))
		on := fn.ChildByFieldName("object")
		if (method == "apply" || method == "call") && typeOf(on) == "member_expression" {
			// client.hmget.apply(client, args): an HMGET on client
			method, on = f.text(on.ChildByFieldName("property")), on.ChildByFieldName("object")
		}
		recv, multi := f.tsUsedOn(on, 0)
		id := f.tsReceiver(recv)
		if id == "" {
			continue
		}
		u := f.used[id]
		if u == nil {
			u = &tsUsage{names: map[string]bool{}}
			f.used[id] = u
		}
		switch {
		case method == "exec" && multi:
			u.exec = true
		case method == "defineCommand" && !multi:
			if name, keys, ok := f.tsDefinedCommand(args(call.ChildByFieldName("arguments"))); ok {
				if u.scripts == nil {
					u.scripts = map[string]int{}
				}
				u.scripts[name] = keys
			}
		case method == "duplicate" && !multi: // a second connection of ioredis and node-redis
			u.names[method] = true
		case redisOnly(method):
			u.names[tsCommand(method)] = true
		}
	}
	return f.used
}

// tsDefinedCommand reads defineCommand("name", {numberOfKeys: 1, lua: …}):
// the object must give the script (lua), as ioredis's definition does.
func (f *srcFile) tsDefinedCommand(as []*sitter.Node) (name string, keys int, ok bool) {
	if len(as) < 2 || typeOf(as[1]) != "object" {
		return "", 0, false
	}
	name, ok = f.wordLit(as[0])
	if !ok {
		return "", 0, false
	}
	keys, lua := -1, false
	for i := 0; i < int(as[1].NamedChildCount()); i++ {
		p := as[1].NamedChild(i)
		if typeOf(p) != "pair" {
			continue
		}
		switch strings.Trim(f.text(p.ChildByFieldName("key")), `"'`) {
		case "lua":
			lua = true
		case "numberOfKeys":
			if n, err := strconv.Atoi(f.text(p.ChildByFieldName("value"))); err == nil && n >= 0 {
				keys = n
			}
		}
	}
	return name, keys, lua
}

// tsUsedOn is the receiver a method call acts on: obj itself, or the
// receiver whose multi() or pipeline() obj is (chained, through the
// commands queued on it, or held in a variable given only that), multi
// true then; nil when it is neither.
func (f *srcFile) tsUsedOn(obj *sitter.Node, depth int) (recv *sitter.Node, multi bool) {
	if depth > 8 {
		return nil, false
	}
	switch typeOf(obj) {
	case "call_expression":
		fn := obj.ChildByFieldName("function")
		if typeOf(fn) != "member_expression" {
			return nil, false
		}
		switch name := f.text(fn.ChildByFieldName("property")); {
		case name == "multi" || name == "pipeline":
			if r := fn.ChildByFieldName("object"); f.tsReceiver(r) != "" {
				return r, true
			}
		case commandKeys(tsCommand(name), 1, noInt) != nil:
			if r, m := f.tsUsedOn(fn.ChildByFieldName("object"), depth+1); m {
				return r, true
			}
		}
		return nil, false
	case "identifier":
		if bs := f.lookup(f.text(obj), obj); len(bs) == 1 && bs[0].value != nil {
			if r, m := f.tsUsedOn(bs[0].value, depth+1); m {
				return r, true
			}
		}
	}
	return obj, false
}

// tsReceiver names a receiver the usage rule reads: a variable, this.field
// or variable.field, with the scope its bindings belong to (two functions'
// client parameters, two classes' this.client are not one receiver); ""
// for anything else or a name the file does not bind.
func (f *srcFile) tsReceiver(n *sitter.Node) string {
	name, at := "", n
	switch typeOf(n) {
	case "identifier":
		name = f.text(n)
	case "member_expression":
		o, prop := n.ChildByFieldName("object"), f.text(n.ChildByFieldName("property"))
		switch typeOf(o) {
		case "this":
			name = "this." + prop
		case "identifier": // the scope is the variable's
			name, at = f.text(o), o
		}
	}
	if name == "" {
		return ""
	}
	bs := f.lookup(name, at)
	if len(bs) == 0 {
		return ""
	}
	return f.text(n) + "@" + strconv.Itoa(int(bs[0].scope.start))
}

// tsUsedClient reports a receiver of unknown type that the usage rule
// makes a client.
func (f *srcFile) tsUsedClient(obj *sitter.Node, depth int) bool {
	u := f.tsUsages()[f.tsReceiver(obj)]
	return u != nil && u.client() && f.tsUnknown(obj, depth)
}

// tsUnknown reports an expression whose type the scan cannot know: a
// parameter or a value without a declared type, a member of one, a call of
// a library; not a value constructed here (new Map(), {}), declared with a
// type, or an object of the project's classes, whose members the scan
// follows instead.
func (f *srcFile) tsUnknown(n *sitter.Node, depth int) bool {
	if depth > 8 || n == nil {
		return false
	}
	switch typeOf(n) {
	case "identifier":
		return f.tsUnknownName(f.text(n), n, depth)
	case "member_expression":
		o := n.ChildByFieldName("object")
		if typeOf(o) == "this" {
			name := "this." + f.text(n.ChildByFieldName("property"))
			if _, _, found := f.resolve(name, n); !found {
				return false
			}
			if f.proj != nil {
				// get client() { return this._client; }: what the getter returns
				for _, d := range f.proj.inherited(f.tsClassOf(o, 0), name[len("this."):]) {
					if tsSetter(d) {
						continue
					}
					if !d.getter || d.body == nil {
						return false
					}
					var exprs []*sitter.Node
					d.f.returns(d, d.body, &exprs)
					for _, e := range exprs {
						if !d.f.tsUnknown(e, depth+1) {
							return false
						}
					}
				}
			}
			return f.tsUnknownName(name, n, depth)
		}
		if f.proj != nil && f.tsClassOf(o, 0) != "" {
			return false
		}
		return typeOf(o) != "identifier" || f.tsUnknown(o, depth+1)
	case "await_expression", "parenthesized_expression", "non_null_expression":
		return n.NamedChildCount() > 0 && f.tsUnknown(n.NamedChild(0), depth+1)
	case "ternary_expression":
		return f.tsUnknown(n.ChildByFieldName("consequence"), depth+1) && f.tsUnknown(n.ChildByFieldName("alternative"), depth+1)
	case "binary_expression": // opts.client || opts.redis
		if op := f.text(n.ChildByFieldName("operator")); op != "||" && op != "??" {
			return false
		}
		return f.tsUnknown(n.ChildByFieldName("left"), depth+1) && f.tsUnknown(n.ChildByFieldName("right"), depth+1)
	case "call_expression":
		return f.proj == nil || len(tsCallees(f, n)) == 0
	}
	return false
}

// tsUnknownName: every binding of the name has no declared type (or
// any, unknown) and is a parameter or a value of unknown type.
func (f *srcFile) tsUnknownName(name string, at *sitter.Node, depth int) bool {
	bs := f.lookup(name, at)
	if len(bs) == 0 {
		return false
	}
	for _, b := range bs {
		if b.typ != "" && b.typ != "any" && b.typ != "unknown" {
			return false
		}
		if b.value != nil && !tsNothing(b.value) && !f.tsUnknown(b.value, depth+1) {
			return false
		}
	}
	return true
}

// tsNothing reports null or undefined: a field's value before it is set
// (this.client = null in a constructor, the client given later).
func tsNothing(n *sitter.Node) bool {
	return typeOf(n) == "null" || typeOf(n) == "undefined"
}

// tsScriptKeys are the keys of a call of a command the receiver defined
// with defineCommand: the first numberOfKeys arguments (one when the
// definition does not say), also inside an array given as the only
// argument ([key, arg], [key].concat(args)); ok false when the method
// is not such a command.
func (f *srcFile) tsScriptKeys(obj *sitter.Node, method string, as []*sitter.Node) ([]*sitter.Node, bool) {
	recv, _ := f.tsUsedOn(obj, 0)
	u := f.tsUsages()[f.tsReceiver(recv)]
	if u == nil {
		return nil, false
	}
	n, ok := u.scripts[method]
	if !ok {
		return nil, false
	}
	if n < 0 {
		n = 1
	}
	if len(as) == 1 {
		// [key, arg], [key].concat(args), or a variable given one
		if head := f.tsArrayHead(as[0], 0); head != nil {
			as = head
		}
	}
	var out []*sitter.Node
	for _, a := range as[:min(n, len(as))] {
		if typeOf(a) == "spread_element" {
			break
		}
		out = append(out, a)
	}
	return out, true
}

// inherited are the methods named name that class cls or a class it
// extends declares.
func (p *project) inherited(cls, name string) []*funcDef {
	var out []*funcDef
	seen := map[string]bool{}
	for todo := []string{cls}; len(todo) > 0; todo = todo[1:] {
		c := todo[0]
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		for _, d := range p.funcs[name] {
			if d.class != nil && d.class.name == c {
				out = append(out, d)
			}
		}
		for _, cd := range p.classes[c] {
			todo = append(todo, cd.bases...)
		}
	}
	return out
}

// tsSetter reports a set accessor (set client(value) { … }).
func tsSetter(d *funcDef) bool {
	for i := 0; typeOf(d.node) == "method_definition" && i < int(d.node.ChildCount()); i++ {
		if d.node.Child(i).Type() == "set" {
			return true
		}
	}
	return false
}
