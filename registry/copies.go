package registry

import (
	"unsafe"

	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/keytmpl"
)

// A hot key's copies (hot.replicas > 1) are stored under the key's name
// with "#<n>" appended: at the end of the key, or at the end of its hash
// tag's content when it has one ("{cart:42#3}:items"), so that the copies
// spread over slots. The registry classifies a copy to the template of
// the key it copies. hotkey names the copies (ReplicaKey) and reads them
// back through BaseKey.

// BaseKey returns the key a copy name was made from, and whether name
// carries a copy suffix: "#" and digits at the end of its hash tag's
// content when it has a tag, else at the end.
func BaseKey(name string) (string, bool) {
	at, end, ok := copySuffix(name)
	if !ok {
		return name, false
	}
	return name[:at] + name[end:], true
}

// copySuffix returns where the copy suffix "#<digits>" of name starts and
// ends, and whether name has one.
func copySuffix(name string) (at, end int, ok bool) {
	from, end := 0, len(name)
	if s, e, tag := keyslot.Tag(name); tag {
		from, end = s, e
	}
	i := end
	for i > from && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == end || i-1 <= from || name[i-1] != '#' {
		return 0, 0, false // no digits, no '#', or nothing would be left of the tag or key
	}
	return i - 1, end, true
}

// appendBase returns the name of the key that copy name copies, the
// suffix at name[at:end] cut out: a part of name when the suffix ends it,
// else joined in buf (the result then shares buf's memory).
func appendBase(buf []byte, name string, at, end int) (string, []byte) {
	if end == len(name) {
		return name[:at], buf
	}
	buf = append(append(buf[:0], name[:at]...), name[end:]...)
	return unsafe.String(unsafe.SliceData(buf), len(buf)), buf
}

// lookupCopy is Lookup for a key the matcher does not know: the entry of
// the key it copies, when key is a copy of a key whose template keeps
// copies (hot.replicas > 1). A copy inside a hash tag is joined in a
// buffer on the stack, so it does not allocate either (up to 256 bytes).
// It is kept out of line: Lookup's other paths need none of its stack.
//
//go:noinline
func (r *Registry) lookupCopy(key string) *Entry {
	at, end, ok := copySuffix(key)
	if !ok {
		return nil
	}
	var buf [256]byte
	base, _ := appendBase(buf[:0], key, at, end)
	if i := r.matcher.Lookup(base); i >= 0 && r.Entries[i].keepsCopies() {
		return r.Entries[i]
	}
	return nil
}

// keepsCopies reports whether keys of e are stored in several copies.
func (e *Entry) keepsCopies() bool { return e.Hot != nil && e.Hot.Replicas > 1 }

// matchCopy matches key, a copy Lookup gave e for, as the key it copies:
// the captures are those of the base key, joined in *buf when the copy is
// inside a hash tag.
func matchCopy(e *Entry, dst []keytmpl.Capture, key string, buf *[]byte) ([]keytmpl.Capture, bool) {
	at, end, ok := copySuffix(key)
	if !ok {
		return dst, false
	}
	var base string
	base, *buf = appendBase(*buf, key, at, end)
	return e.Template.AppendMatch(dst, base)
}
