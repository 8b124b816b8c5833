// Package guardmodel is the sequential model of the namespace guard that
// porcupine checks concurrent histories against: the Go guard's own
// linearizability test and the clients' cross-language one record real
// calls as Operations of Inputs and Outputs, and Check says whether they
// are those of some sequential order of the calls.
//
// The model, per key: the owner (none, namespace 0 or 1) and two business
// fields. It is test support: no package but tests imports it.
package guardmodel

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/keyguard/keyguard/guard"
)

// Kind is an operation of the model.
type Kind uint8

const (
	Set     Kind = iota // one field
	SetBoth             // both fields in one call
	Batch               // one field through a pipelined batch
	Get                 // one field
	GetAll              // every field
	Delete              // the key
)

var kindNames = [...]string{"set", "setboth", "batch", "get", "getall", "delete"}

func (k Kind) String() string { return kindNames[k] }

// Input is one call: its kind, the key (an index), the caller's
// namespace (0 or 1), the field (0 or 1) and the values it writes.
type Input struct {
	Kind  Kind
	Key   int
	NS    int8
	Field int8
	Vals  [2]string
}

// Output is what the call returned.
type Output struct {
	Conflict bool
	Owner    int8 // on conflict: the owner reported; see Unexpected
	Result   guard.Result
	Has      [2]bool   // Get, GetAll: the fields present
	Vals     [2]string // and their values
	Deleted  bool
}

// Unexpected is the output to record for an error the model does not
// know: no state accepts it, so it fails the check too.
var Unexpected = Output{Conflict: true, Owner: -2}

type state struct {
	owner int8 // -1: no owner (the key does not exist)
	has   [2]bool
	vals  [2]string
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// step: a caller of another namespace gets a conflict naming the owner and
// changes nothing; the owner's writes count added and updated fields,
// claim a key that did not exist and set its TTL then only; nothing is
// adopted (every write goes through the guard).
func step(st, input, output any) (bool, any) {
	s, in, out := st.(state), input.(Input), output.(Output)
	if s.owner >= 0 && s.owner != in.NS {
		return out.Conflict && out.Owner == s.owner, s
	}
	if out.Conflict {
		return false, s
	}
	fresh := s.owner < 0
	next := s
	next.owner = in.NS
	r := out.Result
	switch in.Kind {
	case Set, Batch:
		f := in.Field
		ok := r.Added == b2i(!s.has[f]) && r.Updated == b2i(s.has[f]) && r.Claimed == fresh && !r.Adopted && r.TTLSet == fresh
		next.has[f], next.vals[f] = true, in.Vals[f]
		return ok, next
	case SetBoth:
		ok := r.Added == b2i(!s.has[0])+b2i(!s.has[1]) && r.Updated == b2i(s.has[0])+b2i(s.has[1]) &&
			r.Claimed == fresh && !r.Adopted && r.TTLSet == fresh
		next.has, next.vals = [2]bool{true, true}, in.Vals
		return ok, next
	case Get:
		f := in.Field
		return out.Has[f] == s.has[f] && out.Vals[f] == s.vals[f], s
	case GetAll:
		return out.Has == s.has && out.Vals == s.vals, s
	case Delete:
		return out.Deleted == !fresh, state{owner: -1}
	}
	return false, s
}

// Model is the guard's model, partitioned by key.
var Model = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(Input).Key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return state{owner: -1} },
	Step: step,
	DescribeOperation: func(input, output any) string {
		in, out := input.(Input), output.(Output)
		if out.Conflict {
			return fmt.Sprintf("%s k%d ns%d -> conflict(ns%d)", in.Kind, in.Key, in.NS, out.Owner)
		}
		return fmt.Sprintf("%s k%d ns%d f%d %v -> %+v", in.Kind, in.Key, in.NS, in.Field, in.Vals, out)
	},
	DescribeState: func(s any) string { return fmt.Sprintf("%+v", s.(state)) },
}

// RandomInput draws the next call of caller id in namespace ns on one of
// keys keys: 30% Set, 10% SetBoth, 10% Batch, 20% Get, 15% GetAll, 15%
// Delete, each writing values no other call writes.
func RandomInput(rng *rand.Rand, keys int, ns int8, id, seq int) Input {
	in := Input{Key: rng.IntN(keys), NS: ns, Field: int8(rng.IntN(2)),
		Vals: [2]string{fmt.Sprintf("%d.%d.a", id, seq), fmt.Sprintf("%d.%d.b", id, seq)}}
	switch p := rng.IntN(100); {
	case p < 30:
		in.Kind = Set
	case p < 40:
		in.Kind = SetBoth
	case p < 50:
		in.Kind = Batch
	case p < 70:
		in.Kind = Get
	case p < 85:
		in.Kind = GetAll
	default:
		in.Kind = Delete
	}
	return in
}

// Check checks history against Model. It first counts the outcomes by
// kind ("set", "set/conflict", ...) and fails t when one of want never
// occurred: a history without them proves little. A history that is not
// linearizable fails t, with porcupine's visualization written to t's
// artifact directory (go test -artifacts keeps it).
func Check(t *testing.T, what string, history []porcupine.Operation, want []string) {
	t.Helper()
	counts := map[string]int{}
	for _, op := range history {
		name := op.Input.(Input).Kind.String()
		if op.Output.(Output).Conflict {
			name += "/conflict"
		}
		counts[name]++
	}
	t.Logf("%s: %d operations: %v", what, len(history), counts)
	for _, name := range want {
		if counts[name] == 0 {
			t.Errorf("%s: no %q operation in the history; the check proves little", what, name)
		}
	}
	res, info := porcupine.CheckOperationsVerbose(Model, history, 2*time.Minute)
	if res == porcupine.Ok {
		return
	}
	path := filepath.Join(t.ArtifactDir(), "linearizability.html")
	if f, err := os.Create(path); err == nil {
		if res == porcupine.Illegal {
			_ = porcupine.Visualize(Model, info, f)
		}
		_ = f.Close()
	}
	t.Fatalf("%s: the history of %d operations is not linearizable (%v); visualization: %s", what, len(history), res, path)
}
