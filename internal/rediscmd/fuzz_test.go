package rediscmd

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzKeys feeds arbitrary argument vectors, with the command taken from
// the table (idx) or from the data itself, and arguments of every type
// go-redis sends. Keys must not panic, must report positions inside args
// and keys equal to the arguments' wire text.
func FuzzKeys(f *testing.F) {
	f.Add(uint16(0), []byte("set\xffk\xffv\xffget"), []byte{0, 0, 0, 0}, true)
	f.Add(uint16(0), []byte("eval\xffs\xff1x\xffk"), []byte{0, 1, 0, 1}, true)
	f.Add(uint16(0), []byte("xread\xffcount\xff1\xffstreams\xffa\xffb\xff0\xff0"), []byte{0, 0, 2, 0, 0, 1}, true)
	f.Add(uint16(0), []byte("migrate\xffh\xff1\xff\xff0\xff0\xffkeys\xffa"), []byte{}, true)
	f.Add(uint16(0), []byte("sort\xffk\xfflimit\xffstore\xffx"), []byte{}, true)
	f.Add(uint16(0), []byte("bitfield\xffk\xffget\xffu8"), []byte{}, true)
	f.Add(uint16(7), []byte("a\xffb\xffc"), []byte{3, 4, 5, 6, 7}, false)
	f.Add(uint16(300), []byte("2\xffa\xffb\xff0"), []byte{2}, false)
	f.Fuzz(func(t *testing.T, idx uint16, data, kinds []byte, nameInData bool) {
		var a []any
		parts := bytes.Split(data, []byte{0xff})
		if !nameInData {
			c := &Commands()[int(idx)%len(Commands())]
			for _, p := range strings.Split(c.Name, "|") {
				a = append(a, p)
			}
		}
		for i, p := range parts {
			var k byte
			if i < len(kinds) {
				k = kinds[i]
			}
			a = append(a, typed(p, k))
		}
		cmd, ok := LookupArgs(a)
		if !ok {
			return
		}
		var keys []Key
		err := cmd.Keys(a, func(pos int, key string, flags KeyFlags) bool {
			if pos < 1 || pos >= len(a) {
				t.Fatalf("%s: position %d outside %d args", cmd.Name, pos, len(a))
			}
			var buf [numBufSize]byte
			if want, _ := wire(a[pos], &buf); key != want {
				t.Fatalf("%s: key %q at %d, argument is %q", cmd.Name, key, pos, want)
			}
			if flags&(KeyRO|KeyRW|KeyOW|KeyRM) == 0 {
				t.Fatalf("%s: key %q without RO/RW/OW/RM: %s", cmd.Name, key, flags)
			}
			keys = append(keys, Key{pos, key, flags})
			return true
		})
		if !cmd.ArityOK(len(a)) && (!errors.Is(err, ErrArity) || len(keys) > 0) {
			t.Fatalf("%s with %d args: err %v, %d keys", cmd.Name, len(a), err, len(keys))
		}
		again, err2 := cmd.AppendKeys(nil, a)
		if !errors.Is(err2, err) || len(again) != len(keys) {
			t.Fatalf("%s: AppendKeys %v %v, Keys %v %v", cmd.Name, again, err2, keys, err)
		}
	})
}

type marshaler []byte

func (m marshaler) MarshalBinary() ([]byte, error) { return m, nil }

// typed turns fuzz bytes into an argument of one of the types go-redis
// accepts (or one it refuses).
func typed(p []byte, kind byte) any {
	n := int64(atoi(string(p)))
	switch kind % 12 {
	case 1:
		return p
	case 2:
		return int(n)
	case 3:
		return float64(n) / 4
	case 4:
		return nil
	case 5:
		return n%2 == 0
	case 6:
		return struct{}{}
	case 7:
		return n
	case 8:
		return time.Duration(n)
	case 9:
		return marshaler(p)
	case 10:
		return uint64(n)
	case 11:
		s := string(p)
		return &s
	}
	return string(p)
}
