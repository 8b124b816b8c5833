package migrate

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
)

// Verify checks, on every master, that every key of the old template has
// its new key with the same type, the same content and an expiry within
// opts.TTLTolerance (with moved fields: the same values of those fields).
// Content is compared on DUMP payloads and, when they differ (two
// encodings of one value, the order of a hash table) or the server cannot
// DUMP, on a digest of the value read with commands of its type. A
// mismatch is checked a second time after its batch, so a dual-writer
// caught between its two writes is not reported. Result.Mismatches lists
// them; Counts.Mismatched counts them.
func (p *Plan) Verify(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Result, error) {
	j := newJob(opVerify, p, rdb, opts)
	j.work = &verifyBatch{v: newVerifier(j)}
	res, err := j.run(ctx)
	if err == nil && res.Complete {
		n, terr := p.tombstones(ctx, rdb)
		if terr != nil {
			return res, terr
		}
		if n > 0 {
			res.Tombstones = n
			res.Notes = append(res.Notes, fmt.Sprintf("%d old keys of this migration are tombstones of a cleanup across Cluster slots: migrate cleanup --restore brings them back until their grace period ends", n))
		}
	}
	return res, err
}

// tombstones counts the tombstones of the plan's old keys on every master,
// walking as the audit does; a walk that could not cover every key is an
// error rather than a count too low.
func (p *Plan) tombstones(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	cfg, addrs, db, cluster, err := redisopt.Reach(ctx, rdb)
	if err != nil {
		return 0, err
	}
	var mu sync.Mutex
	var n int64
	res, err := live.Walk(ctx, live.TargetOf(cfg, addrs, db, cluster), live.WalkOptions{
		Match: TombPrefix + "*",
		Name:  "keyguard-migrate",
		Visit: func(_ context.Context, b *live.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			for _, k := range b.Keys {
				if old, fields, _, ok := parseTomb(k); ok && fields == (p.Fields != nil) && p.Owns(old) {
					n++
				}
			}
			return nil
		},
		Restarted: func(string, int) {
			mu.Lock()
			n = 0
			mu.Unlock()
		},
	})
	if err != nil {
		return 0, fmt.Errorf("count tombstones: %w", err)
	}
	if !res.Complete {
		var gaps []string
		for _, g := range res.Coverage.NotCovered {
			gaps = append(gaps, g.String())
		}
		return 0, fmt.Errorf("count tombstones: not covered: %s", strings.Join(gaps, "; "))
	}
	return n, nil
}

type verifyBatch struct{ v *verifier }

func (b *verifyBatch) batch(ctx context.Context, pairs []pair, n *Counts) error {
	vs, err := b.v.check(ctx, pairs)
	if err != nil {
		return err
	}
	var again []pair
	var idx []int
	for i := range vs {
		if vs[i].state == stMismatch {
			again = append(again, pairs[i])
			idx = append(idx, i)
		}
	}
	if len(again) > 0 {
		vs2, err := b.v.check(ctx, again)
		if err != nil {
			return err
		}
		for k, i := range idx {
			vs[i] = vs2[k]
		}
	}
	for i := range vs {
		vs[i].count(n)
		if vs[i].state == stMismatch || vs[i].state == stWrongType {
			b.v.j.mismatch(vs[i].m)
		}
	}
	return nil
}

// Verdict states.
const (
	stOK = iota
	stMismatch
	stExpired   // the old key is gone
	stWrongType // the old key is not of the template's type
	stNoFields  // --fields: the old hash has none of them
)

// verdict is the comparison of one pair, with what cleanup needs to
// delete the old key only if it is still what was compared.
type verdict struct {
	state    int
	m        Mismatch
	oldSum   string // SHA-1 of the old key's DUMP
	deadline int64  // the old key's PEXPIRETIME
	vals     []*string
	// The new key as it verified, so that cleanup deletes the old key
	// only while the new one is still that.
	newSum      string // SHA-1 of the new key's DUMP
	newDeadline int64  // the new key's PEXPIRETIME
}

func (v *verdict) count(n *Counts) {
	switch v.state {
	case stOK:
		n.Verified++
	case stMismatch:
		n.Mismatched++
	case stExpired:
		n.Expired++
	case stWrongType:
		n.WrongType++
		n.Mismatched++
	case stNoFields:
		n.NoFields++
	}
}

type verifier struct {
	j   *job
	sc  *scripts
	ttl ttlPolicy // the new template's, which copy applies
}

func newVerifier(j *job) *verifier {
	return &verifier{j: j, sc: newScripts(), ttl: newTTLPolicy(j.plan.ToEntry, false)}
}

// check compares each pair's old and new key.
func (v *verifier) check(ctx context.Context, pairs []pair) ([]verdict, error) {
	if v.j.plan.Fields != nil {
		return v.checkFields(ctx, pairs)
	}
	// TYPE, DUMP and PEXPIRETIME of both keys, one pipeline. The three reads
	// of a key are not one unit: a write in between gives a mismatch that
	// the second check clears, and cleanup deletes a key only if it still
	// has the DUMP digest and deadline read here.
	calls := make([]call, 0, 6*len(pairs))
	for _, pr := range pairs {
		for _, k := range []string{pr.src(), pr.new} {
			calls = append(calls, call{args: []any{"type", k}}, call{args: []any{"dump", k}}, call{args: []any{"pexpiretime", k}})
		}
	}
	cmds, err := exec(ctx, v.j.rdb, v.sc, calls)
	if err != nil {
		return nil, err
	}
	out := make([]verdict, len(pairs))
	for i, pr := range pairs {
		var rs [2]keyRead
		for k := range rs {
			at := 6*i + 3*k
			if rs[k], err = readKey(calls[at:at+3], cmds[at:at+3]); err != nil {
				return nil, err
			}
		}
		if pr.tomb != "" && rs[0].typ != "none" {
			rs[0].deadline = pr.deadline // a tombstone expires with the grace period
		}
		vd, err := v.compare(ctx, pr, rs[0], rs[1])
		if err != nil {
			return nil, err
		}
		out[i] = vd
	}
	return out, nil
}

// readKey reads the answers to TYPE, DUMP and PEXPIRETIME of one key. A
// DUMP refused by a server that cannot serialize the type (an emulation)
// leaves the payload nil.
func readKey(calls []call, cmds []*redis.Cmd) (keyRead, error) {
	typ, err := cmds[0].Text()
	if err != nil {
		return keyRead{}, replyErr(&calls[0], err)
	}
	r := keyRead{typ: typ, deadline: -1}
	if typ == "none" {
		return r, nil
	}
	if p, err := cmds[1].Text(); err == nil {
		r.payload = &p
	} else if err != redis.Nil && !isReply(err) {
		return r, replyErr(&calls[1], err)
	}
	if r.deadline, err = cmds[2].Int64(); err != nil {
		return r, replyErr(&calls[2], err)
	}
	return r, nil
}

func (v *verifier) compare(ctx context.Context, pr pair, o, nw keyRead) (verdict, error) {
	vd := verdict{deadline: o.deadline, newDeadline: nw.deadline, m: Mismatch{Old: pr.old, New: pr.new}}
	vd.oldSum, vd.newSum = sha1Hex(o.payload), sha1Hex(nw.payload)
	mism := func(kind, format string, args ...any) (verdict, error) {
		vd.state, vd.m.Kind, vd.m.Detail = stMismatch, kind, fmt.Sprintf(format, args...)
		return vd, nil
	}
	switch {
	case o.typ == "none":
		vd.state = stExpired
		return vd, nil
	case o.typ != v.j.plan.Type:
		vd.state, vd.m.Kind = stWrongType, MismatchWrongType
		vd.m.Detail = fmt.Sprintf("the old key is a %s, the template holds a %s: it was not copied", o.typ, v.j.plan.Type)
		return vd, nil
	case nw.typ == "none":
		return mism(MismatchMissing, "the new key does not exist")
	case nw.typ != o.typ:
		return mism(MismatchType, "the new key is a %s, the old one a %s", nw.typ, o.typ)
	}
	if o.payload == nil || nw.payload == nil || *o.payload != *nw.payload {
		a, err := digest(ctx, v.j.rdb, pr.src(), o.typ)
		if err != nil {
			return vd, err
		}
		b, err := digest(ctx, v.j.rdb, pr.new, o.typ)
		if err != nil {
			return vd, err
		}
		if !bytes.Equal(a, b) {
			return mism(MismatchContent, "the values differ")
		}
	}
	if d, ok := ttlApart(o.deadline, nw.deadline, v.j.opts.TTLTolerance); !ok && !v.ttl.allows(o.deadline, nw.deadline, time.Now().UnixMilli(), v.j.opts.TTLTolerance.Milliseconds()) {
		return mism(MismatchTTL, "%s", d)
	}
	return vd, nil
}

// sha1Hex is the hex SHA-1 of a DUMP payload, "" for none.
func sha1Hex(payload *string) string {
	if payload == nil {
		return ""
	}
	sum := sha1.Sum([]byte(*payload))
	return hex.EncodeToString(sum[:])
}

// ttlApart compares two PEXPIRETIME answers.
func ttlApart(a, b int64, tol time.Duration) (string, bool) {
	switch {
	case a < 0 && b < 0:
		return "", true
	case a < 0:
		return "the old key has no TTL, the new one expires", false
	case b < 0:
		return "the new key has no TTL, the old one expires", false
	}
	d := time.Duration(b-a) * time.Millisecond
	if d.Abs() <= tol {
		return "", true
	}
	when := "before"
	if d > 0 {
		when = "after"
	}
	return fmt.Sprintf("the new key expires %s %s the old one (tolerance %s)", d.Abs(), when, tol), false
}

// checkFields compares the moved fields of each pair. The old key's TTL
// is its template owner's business, so expiries are not compared.
func (v *verifier) checkFields(ctx context.Context, pairs []pair) ([]verdict, error) {
	keys := make([]string, 0, 2*len(pairs))
	for _, pr := range pairs {
		keys = append(keys, pr.src(), pr.new)
	}
	reads, err := readFields(ctx, v.j.rdb, v.sc, v.j.plan.Fields, keys)
	if err != nil {
		return nil, err
	}
	out := make([]verdict, len(pairs))
	for i, pr := range pairs {
		o, nw := reads[2*i], reads[2*i+1]
		vd := verdict{deadline: o.deadline, newDeadline: nw.deadline, vals: o.vals, m: Mismatch{Old: pr.old, New: pr.new}}
		switch {
		case o.typ == "none":
			vd.state = stExpired
		case o.typ != "hash":
			vd.state, vd.m.Kind = stWrongType, MismatchWrongType
			vd.m.Detail = fmt.Sprintf("the old key is a %s, not a hash: nothing was copied", o.typ)
		case !o.any():
			vd.state = stNoFields
		case nw.typ == "none":
			vd.state, vd.m.Kind, vd.m.Detail = stMismatch, MismatchMissing, "the new key does not exist"
		case nw.typ != "hash":
			vd.state, vd.m.Kind, vd.m.Detail = stMismatch, MismatchType, fmt.Sprintf("the new key is a %s, not a hash", nw.typ)
		default:
			for k, f := range v.j.plan.Fields {
				if !sameVal(o.vals[k], nw.vals[k]) {
					vd.state, vd.m.Kind = stMismatch, MismatchContent
					vd.m.Detail = fmt.Sprintf("field %s: old %s, new %s", f, show(o.vals[k]), show(nw.vals[k]))
					break
				}
			}
		}
		out[i] = vd
	}
	return out, nil
}

func sameVal(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show(s *string) string {
	if s == nil {
		return "absent"
	}
	if len(*s) > 40 {
		return fmt.Sprintf("%q…", (*s)[:40])
	}
	return fmt.Sprintf("%q", *s)
}
