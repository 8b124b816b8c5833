package human

import "strings"

// OneLine is s with every run of white space, newlines included, made one
// space: a server's or library's message as one line of ours.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
