// Package keyshape is what a code scanner knows of a Redis key: its shape,
// literal text with holes for the values the code cannot know
// ("user:" + id + ":info" is user:{id}:info), and how that shape relates to
// the registry's templates. The Go analyzer and the scanners of the other
// languages share it, so one key gets one verdict in every language.
//
//	c := keyshape.NewClassifier(reg)
//	s := keyshape.Concat(keyshape.Lit("user:"), keyshape.Hole(keytmpl.Int, "id", "id"), keyshape.Lit(":info"))
//	f := c.Finding(keyshape.Go, s) // raw-key with the builder to call, or unregistered-code
//
// # When a shape is a key of a template
//
// A hole stands for one non-empty value inside one segment (the generated
// builders refuse a value holding the separator, so no builder key has a
// value spread over two segments); its kind is int when the code says so
// (an integer type, %d) and any text otherwise. The shape fits an entry when
//
//  1. every key the shape can build, reading each hole as any text of its
//     kind, is a key of the entry's template with every placeholder widened
//     to {any} (the shape has the template's literal text where the template
//     has literal text, and a hole only where it has a placeholder), and
//  2. at least one key the shape can build is a key of the template itself
//     (a hole of kind int never fits {x:enum(A,B)}).
//
// So "user:" + id + ":info" fits user:{id:int}:info and user:{name}:info;
// a literal key fits exactly the template the registry's matcher gives it;
// user:{id}:info does not fit the literal template user:admin:info.
//
// A shape that fits some entry is a raw-key finding (a key built by hand,
// with the builder to call instead). A shape that fits none is
// unregistered-code, except when it ends in a hole of any text: that value
// may be a suffix of several segments built elsewhere ("user:" + rest), so
// when some template has a key starting with the shape's head the verdict is
// raw-key with the possible templates. A key that is one unknown value
// (a struct field, a function's result) is raw-key: nothing says it came
// from a builder.
//
// It is pure and imports only registry and internal/codegen (the builders'
// names); the analyzer and scancode import it.
package keyshape
