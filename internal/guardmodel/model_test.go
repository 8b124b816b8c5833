package guardmodel

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/keyguard/keyguard/guard"
)

func op(client int, in Input, out Output, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

var claim = guard.Result{Added: 1, Claimed: true, TTLSet: true}

// TestModelRejects: the model refuses the histories the guard exists to
// prevent, so a passing check means something.
func TestModelRejects(t *testing.T) {
	for name, h := range map[string][]porcupine.Operation{
		"two owners claim one key": {
			op(0, Input{Kind: Set, NS: 0, Vals: [2]string{"a", ""}}, Output{Result: claim}, 0, 1),
			op(1, Input{Kind: Set, NS: 1, Vals: [2]string{"b", ""}}, Output{Result: claim}, 2, 3),
		},
		"the TTL set again by a later write": {
			op(0, Input{Kind: Set, NS: 0, Vals: [2]string{"a", ""}}, Output{Result: claim}, 0, 1),
			op(0, Input{Kind: Set, NS: 0, Field: 1, Vals: [2]string{"", "b"}}, Output{Result: guard.Result{Added: 1, TTLSet: true}}, 2, 3),
		},
		"a conflict naming no owner": {
			op(0, Input{Kind: Get, NS: 1}, Output{Conflict: true, Owner: 0}, 0, 1),
		},
		"a refused write that was applied": {
			op(0, Input{Kind: Set, NS: 0, Vals: [2]string{"a", ""}}, Output{Result: claim}, 0, 1),
			op(1, Input{Kind: Set, NS: 1, Vals: [2]string{"b", ""}}, Output{Conflict: true, Owner: 0}, 2, 3),
			op(0, Input{Kind: Get, NS: 0}, Output{Has: [2]bool{true, false}, Vals: [2]string{"b", ""}}, 4, 5),
		},
		"a key adopted though every write went through the guard": {
			op(0, Input{Kind: Set, NS: 0, Vals: [2]string{"a", ""}}, Output{Result: guard.Result{Added: 1, Claimed: true, Adopted: true, TTLSet: true}}, 0, 1),
		},
		"a read of a deleted key": {
			op(0, Input{Kind: SetBoth, NS: 0, Vals: [2]string{"a", "b"}}, Output{Result: guard.Result{Added: 2, Claimed: true, TTLSet: true}}, 0, 1),
			op(1, Input{Kind: Delete, NS: 0}, Output{Deleted: true}, 2, 3),
			op(0, Input{Kind: GetAll, NS: 0}, Output{Has: [2]bool{true, true}, Vals: [2]string{"a", "b"}}, 4, 5),
		},
		"an unexpected error": {
			op(0, Input{Kind: Get, NS: 0}, Unexpected, 0, 1),
		},
	} {
		if porcupine.CheckOperations(Model, h) {
			t.Errorf("%s: the model accepts it", name)
		}
	}
}

// TestModelAccepts: histories the guard may produce pass, overlapping
// calls in either order among them.
func TestModelAccepts(t *testing.T) {
	h := []porcupine.Operation{
		op(0, Input{Kind: Set, NS: 0, Vals: [2]string{"a", ""}}, Output{Result: claim}, 0, 10),
		// overlaps the claim, so it may come before it (and find no owner)
		// or after it (and conflict); it conflicted
		op(1, Input{Kind: Set, NS: 1, Vals: [2]string{"b", ""}}, Output{Conflict: true, Owner: 0}, 5, 6),
		op(0, Input{Kind: Batch, NS: 0, Field: 1, Vals: [2]string{"", "c"}}, Output{Result: guard.Result{Added: 1}}, 11, 12),
		op(0, Input{Kind: Set, NS: 0, Vals: [2]string{"d", ""}}, Output{Result: guard.Result{Updated: 1}}, 13, 14),
		op(1, Input{Kind: GetAll, NS: 0}, Output{Has: [2]bool{true, true}, Vals: [2]string{"d", "c"}}, 15, 16),
		op(1, Input{Kind: Delete, NS: 0}, Output{Deleted: true}, 17, 18),
		op(0, Input{Kind: Delete, NS: 1}, Output{Deleted: false}, 19, 20),
		op(1, Input{Kind: Set, NS: 1, Key: 1, Vals: [2]string{"e", ""}}, Output{Result: claim}, 0, 1),
	}
	if !porcupine.CheckOperations(Model, h) {
		t.Fatal("the model rejects a history the guard may produce")
	}
}
