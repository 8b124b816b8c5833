package scancode

import (
	"strconv"
	"strings"
	"unicode"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/internal/rediscmd"
)

// commandKeys returns which of a command's arguments (command name not
// counted) are keys, by the server's own key specs: lit gives an
// argument's literal when the source shows one, so that EVAL's numkeys
// counts and GEORADIUS's STORE marks the key after it. When the
// arguments do not satisfy the command (client conveniences: a map for
// HSET, keyword arguments), the command's first key position is used.
// Module commands (TS.ADD, JSON.SET, BF.ADD…) are not in the server's
// table: moduleCommands gives their keys.
func commandKeys(name string, nargs int, lit func(i int) (string, bool)) []int {
	if m, ok := moduleCommands[name]; ok {
		return m.keys(nargs)
	}
	vec := make([]any, nargs+1)
	vec[0] = name
	for i := 0; i < nargs; i++ {
		if v, ok := lit(i); ok {
			vec[i+1] = v
		} else {
			vec[i+1] = "\x00" + strconv.Itoa(i)
		}
	}
	cmd, ok := rediscmd.LookupArgs(vec)
	if !ok || !cmd.HasKeys() {
		return nil
	}
	var out []int
	err := cmd.Keys(vec, func(pos int, _ string, _ rediscmd.KeyFlags) bool {
		out = append(out, pos-1)
		return true
	})
	if err == nil && len(out) > 0 {
		return out
	}
	if cmd.FirstKey > 0 && cmd.FirstKey <= nargs {
		return []int{cmd.FirstKey - 1}
	}
	return nil
}

// commandName turns a client method name into the Redis command it sends:
// hGetAll, hgetAll and hgetall are HGETALL; redis-py's delete is DEL. A
// module command is spelled ts_add by node_redis 3 (ts_addAsync once
// promisified) and tsAdd by Jedis: both are TS.ADD.
func commandName(method string) string {
	m := strings.ToLower(method)
	switch m {
	case "delete":
		return "del"
	}
	if i := strings.IndexByte(m, '_'); i > 0 {
		if d := m[:i] + "." + m[i+1:]; isModuleCommand(d) {
			return d
		}
	}
	if i := strings.IndexFunc(method, unicode.IsUpper); i > 0 && method[:i] == m[:i] {
		if d := m[:i] + "." + m[i:]; isModuleCommand(d) {
			return d
		}
	}
	return m
}

// moduleCommand is the Redis command a client sends for a module
// namespace's method (node-redis client.ts.add, redis-py r.ts().add):
// TS.ADD; "" when the namespace is not a module's.
func moduleCommand(space, method string) string {
	space = strings.ToLower(space)
	if !moduleSpaces[space] {
		return ""
	}
	return space + "." + commandName(method)
}

// moduleKeys are the key positions of a module command, as the legacy
// COMMAND INFO range gives them (command name at 0): first, last (negative
// counts from the end) and step.
type moduleKeys struct{ first, last, step int }

// keys are the indexes of the keys among nargs arguments (name not
// counted).
func (m moduleKeys) keys(nargs int) []int {
	last := m.last
	if last < 0 {
		last += nargs + 1
	}
	last = min(last, nargs)
	var out []int
	for i := m.first; i <= last; i += m.step {
		out = append(out, i-1)
	}
	if out == nil && m.first <= nargs {
		out = []int{m.first - 1} // fewer arguments than the command needs: a client convenience
	}
	return out
}

func isModuleCommand(name string) bool {
	_, ok := moduleCommands[name]
	return ok
}

// moduleSpaces are the namespaces of the module commands clients spell
// as methods.
var moduleSpaces = map[string]bool{"ts": true, "json": true, "bf": true, "cf": true, "cms": true, "topk": true}

// moduleCommands are the key positions of the common commands of
// RedisTimeSeries, RedisJSON and RedisBloom (Bloom and cuckoo filters,
// count-min sketch, top-k). Commands that select keys by a filter
// (TS.MGET, TS.MRANGE, TS.QUERYINDEX) take none.
var moduleCommands = map[string]moduleKeys{
	"ts.create": {1, 1, 1}, "ts.alter": {1, 1, 1}, "ts.add": {1, 1, 1}, "ts.madd": {1, -1, 3},
	"ts.incrby": {1, 1, 1}, "ts.decrby": {1, 1, 1}, "ts.del": {1, 1, 1}, "ts.get": {1, 1, 1}, "ts.info": {1, 1, 1},
	"ts.range": {1, 1, 1}, "ts.revrange": {1, 1, 1}, "ts.createrule": {1, 2, 1}, "ts.deleterule": {1, 2, 1},

	"json.set": {1, 1, 1}, "json.get": {1, 1, 1}, "json.del": {1, 1, 1}, "json.forget": {1, 1, 1},
	"json.mget": {1, -2, 1}, "json.mset": {1, -1, 3}, "json.merge": {1, 1, 1}, "json.type": {1, 1, 1},
	"json.numincrby": {1, 1, 1}, "json.nummultby": {1, 1, 1}, "json.strappend": {1, 1, 1}, "json.strlen": {1, 1, 1},
	"json.arrappend": {1, 1, 1}, "json.arrindex": {1, 1, 1}, "json.arrinsert": {1, 1, 1}, "json.arrlen": {1, 1, 1},
	"json.arrpop": {1, 1, 1}, "json.arrtrim": {1, 1, 1}, "json.objkeys": {1, 1, 1}, "json.objlen": {1, 1, 1},
	"json.clear": {1, 1, 1}, "json.toggle": {1, 1, 1}, "json.resp": {1, 1, 1},

	"bf.reserve": {1, 1, 1}, "bf.add": {1, 1, 1}, "bf.madd": {1, 1, 1}, "bf.exists": {1, 1, 1}, "bf.mexists": {1, 1, 1},
	"bf.insert": {1, 1, 1}, "bf.info": {1, 1, 1}, "bf.card": {1, 1, 1}, "bf.scandump": {1, 1, 1}, "bf.loadchunk": {1, 1, 1},
	"cf.reserve": {1, 1, 1}, "cf.add": {1, 1, 1}, "cf.addnx": {1, 1, 1}, "cf.insert": {1, 1, 1}, "cf.insertnx": {1, 1, 1},
	"cf.exists": {1, 1, 1}, "cf.mexists": {1, 1, 1}, "cf.del": {1, 1, 1}, "cf.count": {1, 1, 1}, "cf.info": {1, 1, 1},
	"cf.scandump": {1, 1, 1}, "cf.loadchunk": {1, 1, 1},
	"cms.initbydim": {1, 1, 1}, "cms.initbyprob": {1, 1, 1}, "cms.incrby": {1, 1, 1}, "cms.query": {1, 1, 1}, "cms.info": {1, 1, 1},
	"topk.reserve": {1, 1, 1}, "topk.add": {1, 1, 1}, "topk.incrby": {1, 1, 1}, "topk.query": {1, 1, 1},
	"topk.count": {1, 1, 1}, "topk.list": {1, 1, 1}, "topk.info": {1, 1, 1},
}

// args are the argument nodes of a call (named children of its argument
// list, comments left out).
func args(list *sitter.Node) []*sitter.Node {
	if list == nil {
		return nil
	}
	var out []*sitter.Node
	for i := 0; i < int(list.NamedChildCount()); i++ {
		c := list.NamedChild(i)
		if t := c.Type(); t != "comment" && t != "line_comment" && t != "block_comment" {
			out = append(out, c)
		}
	}
	return out
}

// pick returns the nodes at the indexes.
func pick(nodes []*sitter.Node, idx []int) []*sitter.Node {
	var out []*sitter.Node
	for _, i := range idx {
		if i >= 0 && i < len(nodes) {
			out = append(out, nodes[i])
		}
	}
	return out
}

// commandArgs is commandKeys over call argument nodes.
func (f *srcFile) commandArgs(method string, as []*sitter.Node) []*sitter.Node {
	idx := commandKeys(commandName(method), len(as), func(i int) (string, bool) { return f.token(as[i]) })
	return pick(as, idx)
}

// token is the text of an argument that is a number or a one-word string
// literal, as a command's numkeys or option token: read from the source
// text alone.
func (f *srcFile) token(a *sitter.Node) (string, bool) {
	if t := strings.TrimRight(f.text(a), "lL"); isDigits(t) {
		return t, true
	}
	return f.wordLit(a)
}

// wordLit is the text of a string literal that holds one bare word, such
// as a command's option token ('STORE', "WITHSCORES").
func (f *srcFile) wordLit(n *sitter.Node) (string, bool) {
	if t := typeOf(n); t != "string" && t != "string_literal" {
		return "", false
	}
	s := f.text(n)
	if len(s) < 3 || !strings.ContainsRune(`'"`+"`", rune(s[0])) || s[len(s)-1] != s[0] {
		return "", false
	}
	w := s[1 : len(s)-1]
	for i := 0; i < len(w); i++ {
		if c := w[i] | 0x20; c < 'a' || c > 'z' {
			return "", false
		}
	}
	return w, true
}

// lastName is the last dotted part of a name ("redis.Redis" → "Redis").
func lastName(s string) string {
	if i := strings.LastIndexAny(s, "."); i >= 0 {
		return s[i+1:]
	}
	return s
}
