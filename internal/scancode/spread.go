package scancode

import (
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/internal/keyshape"
)

// A wrapper that hands Redis its arguments as they come (def remove(self,
// *keys): self.r.delete(*keys); runScript(name, ...args) { return
// client.evalsha(shas[name], ...args) }; bee-queue's _evalScript, which
// copies its arguments and applies evalsha to them) is summarised by an
// args sink (sinksOf): its callers' arguments are read as the command's,
// and the command's key positions say which are keys, EVAL's numkeys
// among them.

// curParam is the index of the parameter of the function being
// summarised (f.cur) that the name id is, -1 when it is none.
func (f *srcFile) curParam(id *sitter.Node) int {
	if f.cur == nil || typeOf(id) != "identifier" {
		return -1
	}
	bs := f.lookup(f.text(id), id)
	if len(bs) != 1 || !bs[0].param || bs[0].scope != spanOf(f.cur.node) {
		return -1
	}
	return slices.Index(f.cur.params, f.text(id))
}

// argsParam is the parameter of f.cur whose values list is: the
// parameter itself (rest: a variadic one, whose values are the call's
// arguments from it on; else a list passed there), or JavaScript's
// arguments (parameter 0, rest), directly or through a copy of it. ok is
// false for any other list.
func (f *srcFile) argsParam(list *sitter.Node) (param int, rest, ok bool) {
	d := f.cur
	if d == nil || list == nil || typeOf(list) != "identifier" {
		return -1, false, false
	}
	if i := f.curParam(list); i >= 0 {
		return i, i == d.rest, true
	}
	if !d.varargs {
		return -1, false, false
	}
	if f.text(list) == "arguments" {
		return 0, true, true
	}
	if bs := f.lookup(f.text(list), list); len(bs) == 1 && f.argumentsCopy(bs[0].value) {
		return 0, true, true
	}
	return -1, false, false
}

// argumentsCopy reports a JavaScript expression that copies the
// function's arguments: Array.from(arguments), [...arguments],
// Array.prototype.slice.call(arguments), or new Array(arguments.length)
// (which a loop then fills, the way code kept from deoptimisation does).
func (f *srcFile) argumentsCopy(v *sitter.Node) bool {
	isArgs := func(n *sitter.Node) bool { return n != nil && typeOf(n) == "identifier" && f.text(n) == "arguments" }
	switch typeOf(v) {
	case "array":
		as := args(v)
		return len(as) == 1 && typeOf(as[0]) == "spread_element" && isArgs(as[0].NamedChild(0))
	case "new_expression":
		as := args(v.ChildByFieldName("arguments"))
		return f.text(v.ChildByFieldName("constructor")) == "Array" && len(as) == 1 &&
			f.text(as[0]) == "arguments.length"
	case "call_expression":
		fn := f.text(v.ChildByFieldName("function"))
		as := args(v.ChildByFieldName("arguments"))
		return len(as) >= 1 && isArgs(as[0]) && (fn == "Array.from" || strings.HasSuffix(fn, "slice.call"))
	}
	return false
}

// usesArguments reports whether a JavaScript function's body reads its
// arguments object (nested functions, which have their own, left out;
// arrow functions, which share it, looked into).
func (f *srcFile) usesArguments(body *sitter.Node) bool {
	if body == nil || !strings.Contains(f.text(body), "arguments") {
		return false
	}
	var walk func(n *sitter.Node, depth int) bool
	walk = func(n *sitter.Node, depth int) bool {
		if depth > 64 {
			return false
		}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			c := n.NamedChild(i)
			switch typeOf(c) {
			case "identifier":
				if f.text(c) == "arguments" {
					return true
				}
			case "function_declaration", "function_expression", "function", "generator_function_declaration",
				"generator_function", "method_definition", "class_declaration", "class":
			default:
				if walk(c, depth+1) {
					return true
				}
			}
		}
		return false
	}
	return walk(body, 0)
}

// handedOn are the keys a call hands Redis through a function whose
// parameter s.param holds the command's arguments (an args sink); with
// a list the call hands on in turn (its own variadic parameter or a list
// it was given), that list, for the caller's summary.
func (f *srcFile) handedOn(call *sitter.Node, s sink) []sinkArg {
	raw := f.positionalSpread(call)
	if s.param >= len(raw) || s.byRecv && (s.recv >= len(raw) || !f.lang.isClient(f, raw[s.recv], 0)) {
		return nil
	}
	var vals []*sitter.Node
	if s.elems {
		for _, a := range raw[s.param:] {
			if l := spreadList(a); l != nil {
				if len(vals) == 0 {
					return []sinkArg{{arg: l, command: s.command, list: true, from: s.from, pre: s.pre}}
				}
				break // what the spread gives, and all after, are not known
			}
			vals = append(vals, a)
		}
	} else {
		a := raw[s.param]
		if spreadList(a) != nil {
			return nil
		}
		if vals = f.listElems(a); vals == nil {
			if typeOf(a) == "identifier" {
				return []sinkArg{{arg: a, command: s.command, list: true, from: s.from, pre: s.pre}}
			}
			return nil
		}
	}
	var out []sinkArg
	for _, k := range f.commandValues(s.command, s.pre, s.from, vals) {
		out = append(out, sinkArg{arg: k, command: s.command})
	}
	return out
}

// commandValues are the keys among vals, a command's arguments from index
// from on (those before it the literals pre, "" where not known), by the
// command's key positions: EVALSHA's numkeys, where pre or vals show it,
// counts its keys.
func (f *srcFile) commandValues(command string, pre []string, from int, vals []*sitter.Node) []*sitter.Node {
	idx := commandKeys(commandName(command), from+len(vals), func(i int) (string, bool) {
		if i < from {
			if i < len(pre) && pre[i] != "" {
				return pre[i], true
			}
			return "", false
		}
		return f.literal(vals[i-from])
	})
	var out []*sitter.Node
	for _, i := range idx {
		if i >= from && i-from < len(vals) {
			out = append(out, vals[i-from])
		}
	}
	return out
}

// literal is the text of an argument whose value the source shows as a
// literal: a token (a number, a word), a string or a constant.
func (f *srcFile) literal(a *sitter.Node) (string, bool) {
	if t, ok := f.token(a); ok {
		return t, true
	}
	if s, _ := f.eval(a, 0); isLiteral(s) {
		return s.Literal()
	}
	return "", false
}

// literals are the literals of args, "" where one is not a literal; nil
// when none is.
func (f *srcFile) literals(args []*sitter.Node) []string {
	var out []string
	for i, a := range args {
		if s, ok := f.literal(a); ok {
			if out == nil {
				out = make([]string, len(args))
			}
			out[i] = s
		}
	}
	return out
}

// keysFrom reports whether every argument of command from index at on
// is a key (DEL, MGET, EXISTS, UNLINK…): a list spread there, or a
// mapped list's one element, is keys whatever its length.
func keysFrom(command string, at int) bool {
	if at < 0 {
		return false
	}
	ks := commandKeys(command, at+2, noInt)
	return slices.Contains(ks, at) && slices.Contains(ks, at+1)
}

// positionalSpread are a call's positional arguments, spreads kept
// (Python's keyword arguments and **kwargs left out).
func (f *srcFile) positionalSpread(call *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	for _, a := range args(call.ChildByFieldName("arguments")) {
		switch typeOf(a) {
		case "keyword_argument", "dictionary_splat":
			continue
		}
		out = append(out, a)
	}
	return out
}

// unrest is the name a rest parameter binds (...keys, *keys), or n as it
// is for any other parameter.
func unrest(n *sitter.Node) *sitter.Node {
	if t := typeOf(n); (t == "rest_pattern" || t == "list_splat_pattern") && n.NamedChildCount() == 1 {
		return n.NamedChild(0)
	}
	return n
}

// spreadList is the list a spread argument (*xs, ...xs) spreads, nil for
// any other argument.
func spreadList(a *sitter.Node) *sitter.Node {
	if t := typeOf(a); (t == "list_splat" || t == "spread_element") && a.NamedChildCount() == 1 {
		return a.NamedChild(0)
	}
	return nil
}

// listElems are the elements a list expression shows, up to the first
// spread ([key, ...rest], [k1, *ks]); nil when it is no literal list.
func (f *srcFile) listElems(n *sitter.Node) []*sitter.Node {
	switch f.lang.name {
	case keyshape.Java:
		return f.javaElements(n, 0)
	case keyshape.TypeScript:
		return f.tsArrayHead(n, 0)
	}
	if t := typeOf(n); t != "list" && t != "tuple" {
		return nil
	}
	var out []*sitter.Node
	for _, e := range args(n) {
		if spreadList(e) != nil {
			break
		}
		out = append(out, e)
	}
	if out == nil {
		out = []*sitter.Node{}
	}
	return out
}
