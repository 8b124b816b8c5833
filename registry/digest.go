package registry

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"time"
)

// digest names what a registry declares, not how its file spells it: a
// hash of every value an audit reads (templates, types, TTLs, owners,
// field sets, the policy, the domains' owners), in order, so that a
// comment, a description, an entry's name for generated code, quoting or
// the order of an entry's fields leave it as it is, and any change an audit's groups or findings could
// show gives another. Reports carry it, so that a partial audit is not
// resumed, nor reports merged, under a registry other than the one their
// keys were grouped by. 16 hex digits.
func digest(r *Registry) string {
	d := digester{h: sha256.New()}
	d.int(int64(r.Version))
	d.int(int64(r.Separator))
	d.str(r.Env)
	d.bool(r.BareList)
	p := r.Policy
	d.int(int64(p.MaxKeyBytes))
	d.bool(p.RequireTTL)
	d.int(p.BigKeyBytes)
	d.int(p.BigKeyElements)
	d.int(int64(len(r.Domains)))
	for _, dom := range r.Domains {
		d.str(dom.Name)
		d.str(dom.Owner)
	}
	d.int(int64(len(r.Entries)))
	for _, e := range r.Entries {
		d.str(e.Key)
		d.str(e.Type)
		d.dur(e.TTL)
		d.dur(e.TTLJitter)
		d.bool(e.Persistent)
		d.str(e.Owner)
		d.bool(e.Guard)
		d.bool(e.Fields != nil)
		d.strs(e.Fields)
		d.bool(e.FieldsExtra)
		d.bool(e.Hot != nil)
		if e.Hot != nil {
			d.int(int64(e.Hot.Replicas))
			d.dur(e.Hot.LocalTTL)
		}
		d.strs(e.Writers)
		d.strs(e.Readers)
		d.bool(e.PIIAllow)
		d.bool(e.Deprecated != nil)
		if e.Deprecated != nil {
			d.str(e.Deprecated.ReplacedBy)
		}
		d.str(e.Domain)
	}
	return hex.EncodeToString(d.h.Sum(nil)[:8])
}

// digester writes values to a hash, each with its length or fixed size,
// so that no two lists of values write the same bytes.
type digester struct {
	h   hash.Hash
	buf [8]byte
}

func (d *digester) int(v int64) {
	binary.LittleEndian.PutUint64(d.buf[:], uint64(v))
	d.h.Write(d.buf[:])
}

func (d *digester) dur(v time.Duration) { d.int(int64(v)) }

func (d *digester) bool(v bool) {
	if v {
		d.int(1)
	} else {
		d.int(0)
	}
}

func (d *digester) str(s string) {
	d.int(int64(len(s)))
	d.h.Write([]byte(s))
}

func (d *digester) strs(ss []string) {
	d.int(int64(len(ss)))
	for _, s := range ss {
		d.str(s)
	}
}
