// Package cmds has the shapes of rueidis's command builders:
// B().Get().Key(k).Build().
package cmds

// Completed is a built command.
type Completed struct{ args []string }

// Builder starts a command.
type Builder struct{}

type (
	Get              struct{ args []string }
	GetKey           struct{ args []string }
	Set              struct{ args []string }
	SetKey           struct{ args []string }
	SetValue         struct{ args []string }
	Del              struct{ args []string }
	DelKey           struct{ args []string }
	Hset             struct{ args []string }
	HsetKey          struct{ args []string }
	HsetFieldValue   struct{ args []string }
	Rename           struct{ args []string }
	RenameKey        struct{ args []string }
	RenameNewkey     struct{ args []string }
	SetExpirationSec struct{ args []string }
)

func (Builder) Get() Get       { return Get{args: []string{"GET"}} }
func (Builder) Set() Set       { return Set{args: []string{"SET"}} }
func (Builder) Del() Del       { return Del{args: []string{"DEL"}} }
func (Builder) Hset() Hset     { return Hset{args: []string{"HSET"}} }
func (Builder) Rename() Rename { return Rename{args: []string{"RENAME"}} }

func (c Get) Key(key string) GetKey { return GetKey{args: append(c.args, key)} }
func (c GetKey) Build() Completed   { return Completed(c) }

func (c Set) Key(key string) SetKey                   { return SetKey{args: append(c.args, key)} }
func (c SetKey) Value(value string) SetValue          { return SetValue{args: append(c.args, value)} }
func (c SetValue) ExSeconds(s int64) SetExpirationSec { return SetExpirationSec(c) }
func (c SetValue) Build() Completed                   { return Completed(c) }
func (c SetExpirationSec) Build() Completed           { return Completed(c) }

func (c Del) Key(key ...string) DelKey { return DelKey{args: append(c.args, key...)} }
func (c DelKey) Build() Completed      { return Completed(c) }

func (c Hset) Key(key string) HsetKey        { return HsetKey{args: append(c.args, key)} }
func (c HsetKey) FieldValue() HsetFieldValue { return HsetFieldValue(c) }
func (c HsetFieldValue) FieldValue(field, value string) HsetFieldValue {
	return HsetFieldValue{args: append(c.args, field, value)}
}
func (c HsetFieldValue) Build() Completed { return Completed(c) }

func (c Rename) Key(key string) RenameKey { return RenameKey{args: append(c.args, key)} }
func (c RenameKey) Newkey(newkey string) RenameNewkey {
	return RenameNewkey{args: append(c.args, newkey)}
}
func (c RenameNewkey) Build() Completed { return Completed(c) }

type (
	ObjectEncoding    struct{ args []string }
	ObjectEncodingKey struct{ args []string }
)

func (Builder) ObjectEncoding() ObjectEncoding {
	return ObjectEncoding{args: []string{"OBJECT", "ENCODING"}}
}
func (c ObjectEncoding) Key(key string) ObjectEncodingKey {
	return ObjectEncodingKey{args: append(c.args, key)}
}
func (c ObjectEncodingKey) Build() Completed { return Completed(c) }
