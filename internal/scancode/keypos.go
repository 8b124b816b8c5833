package scancode

import (
	"strconv"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/internal/rediscmd"
)

// commandKeys returns which of a command's arguments (command name not
// counted) are keys, by the server's own key specs: intLit gives an
// argument's integer literal, so that EVAL's numkeys counts. When the
// arguments do not satisfy the command (client conveniences: a map for
// HSET, keyword arguments), the command's first key position is used.
func commandKeys(name string, nargs int, intLit func(i int) (string, bool)) []int {
	vec := make([]any, nargs+1)
	vec[0] = name
	for i := 0; i < nargs; i++ {
		if v, ok := intLit(i); ok {
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
// hGetAll, hgetAll and hgetall are HGETALL; redis-py's delete is DEL.
func commandName(method string) string {
	m := strings.ToLower(method)
	switch m {
	case "delete":
		return "del"
	}
	return m
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
	idx := commandKeys(commandName(method), len(as), func(i int) (string, bool) {
		t := strings.TrimRight(f.text(as[i]), "lL")
		return t, isDigits(t)
	})
	return pick(as, idx)
}

// lastName is the last dotted part of a name ("redis.Redis" → "Redis").
func lastName(s string) string {
	if i := strings.LastIndexAny(s, "."); i >= 0 {
		return s[i+1:]
	}
	return s
}
