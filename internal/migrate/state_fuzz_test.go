package migrate

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoadState reads arbitrary cursor files. What loads holds no nil
// plan or node and is of the asked operation; saved and loaded again it
// is the same state (a resumed run sees what the last one wrote); and
// plan() finds the plan it added rather than adding it twice.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":1,"op":"copy","plans":[{"from":"a","to":"b","nodes":[{"id":"db0","cursor":5}]}]}`))
	f.Add([]byte(`{"version":1,"op":"copy","plans":[null]}`))
	f.Add([]byte(`{"version":1,"op":"copy","plans":[{"from":"old:string:{id}","to":"new:string:{id}","nodes":[null,{"id":"n","cursor":18446744073709551615,"done":true}]}]}`))
	f.Add([]byte(`{"version":1,"op":"cleanup","plans":[]}`))
	dir := f.TempDir()
	reg := testRegistry(f)
	p, err := NewPlan(reg, "old:string:{id}", "new:string:{id}", PlanOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "s.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, _, err := loadState(path, opCopy)
		if err != nil {
			return
		}
		if st.Op != opCopy || st.Version != stateVersion {
			t.Fatalf("loaded op %q version %d", st.Op, st.Version)
		}
		for _, ps := range st.Plans {
			if ps == nil {
				t.Fatal("a nil plan survived loading")
			}
			for _, n := range ps.Nodes {
				if n == nil {
					t.Fatal("a nil node survived loading")
				}
			}
		}
		back := filepath.Join(dir, "back.json")
		if err := st.save(back); err != nil {
			t.Fatal(err)
		}
		again, existed, err := loadState(back, opCopy)
		if err != nil || !existed {
			t.Fatalf("a saved state does not load: %v (existed %v)", err, existed)
		}
		if !reflect.DeepEqual(normState(st), normState(again)) {
			t.Fatalf("saved and loaded again:\n%+v\nwas\n%+v", again, st)
		}
		plans := len(st.Plans)
		ps, err := st.plan(p, &Options{})
		if err != nil {
			return // a plan of the same templates written with other options
		}
		if ps.From != p.From || ps.To != p.To {
			t.Fatalf("plan() gave %s → %s for %s → %s", ps.From, ps.To, p.From, p.To)
		}
		ps2, err := st.plan(p, &Options{})
		if err != nil || ps2 != ps || len(st.Plans) > plans+1 {
			t.Fatalf("plan() twice: %p %p (%v), %d plans from %d", ps, ps2, err, len(st.Plans), plans)
		}
	})
}

// normState makes nil and empty slices compare equal.
func normState(s *stateFile) stateFile {
	c := *s
	c.SavedAt = s.SavedAt.UTC().Truncate(0)
	c.Plans = nil
	for _, ps := range s.Plans {
		q := *ps
		if len(q.Nodes) == 0 {
			q.Nodes = nil
		}
		if len(q.Fields) == 0 {
			q.Fields = nil
		}
		c.Plans = append(c.Plans, &q)
	}
	return c
}
