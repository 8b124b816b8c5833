// Package scancode is `keyguard scan-code`: it finds Redis keys built by
// hand, and keys no template matches, in Go (through the keylint analyzer),
// Java, Python and TypeScript/JavaScript (through tree-sitter), and writes
// them as text, JSON or SARIF with a baseline to accept known findings.
//
//	res, err := scancode.Scan(ctx, []string{"./services"}, scancode.Options{Registry: reg})
//	err = scancode.NewReport("keyguard.yaml", res).WriteText(os.Stdout)
//
// It is a tool: it links tree-sitter's cgo grammars, so no SDK package may
// import it (the Go analyzer it uses lives in package analyzer).
package scancode
