package codegen

import (
	"strings"
	"unicode"
)

// words splits an identifier or template text into words: at anything
// that is not a letter or digit, and at case changes ("VerifySMS" →
// Verify, SMS; "SMSCode" → SMS, Code; "order2fa" stays whole).
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !isASCIIAlnum(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush(i)
			start = i
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func capFirst(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// pascal joins words keeping their inner case: "VerifySMS" stays as is,
// "promo-info" becomes "PromoInfo".
func pascal(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(capFirst(w))
	}
	return b.String()
}

// title joins words in title case: "RESET_PWD" becomes "ResetPwd".
func title(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(capFirst(strings.ToLower(w)))
	}
	return b.String()
}

// camel is pascal with the first word in lower case: "verifySMS", "smsCode".
func camel(ws []string) string {
	if len(ws) == 0 {
		return ""
	}
	return strings.ToLower(ws[0]) + pascal(ws[1:])
}

// snake is "verify_sms".
func snake(ws []string) string {
	low := make([]string, len(ws))
	for i, w := range ws {
		low[i] = strings.ToLower(w)
	}
	return strings.Join(low, "_")
}

// upperSnake is "VERIFY_SMS".
func upperSnake(ws []string) string { return strings.ToUpper(snake(ws)) }

// validName reports whether s can name a builder: a letter, then
// letters, digits and underscores.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case (r >= '0' && r <= '9' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Words a parameter may not be called in each language: keywords, and
// the names the generated code uses inside a builder.
func reservedGo() map[string]bool {
	return set("break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func",
		"go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch",
		"type", "var", "keybuild", "time", "string", "int64", "k", "_")
}

func reservedJava() map[string]bool {
	return set("abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "const", "continue",
		"default", "do", "double", "else", "enum", "extends", "final", "finally", "float", "for", "goto", "if",
		"implements", "import", "instanceof", "int", "interface", "long", "native", "new", "package", "private",
		"protected", "public", "return", "short", "static", "strictfp", "super", "switch", "synchronized", "this",
		"throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false", "null", "var", "yield",
		"record", "sealed", "permits", "_", "build", "Long", "String")
}

func reservedPython() map[string]bool {
	return set("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
		"del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
		"nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match", "case", "_",
		"build", "int", "str")
}

func reservedTS() map[string]bool {
	return set("break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
		"enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof", "new",
		"null", "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with",
		"as", "implements", "interface", "let", "package", "private", "protected", "public", "static", "yield",
		"await", "arguments", "eval", "undefined", "build", "any", "number", "string", "bigint", "_")
}
