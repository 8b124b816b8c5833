// Package keybuild is the small runtime behind the key builders that
// "keyguard gen" writes: it checks each value against its placeholder,
// hashes {x:hash} values and joins the key in one allocation. It uses the
// standard library only, so generated packages add no dependency.
//
//	k, err := keybuild.Build(&spec, keybuild.Int(1001), keybuild.String("sku-9"))
//	if err != nil { /* a *keybuild.Error names the template and placeholder */ }
//	rdb.Set(ctx, k.String(), v, k.RandomTTL())
//
// Generated code calls Build with typed arguments; most programs only see
// the Key it returns.
//
// # Rules
//
// The builders for Go, Java, Python and TypeScript apply the same checks,
// in this order, and report the first that fails with the same Reason:
//
//	empty      the value is empty (a nil/None/null value counts as empty)
//	encoding   the value is not valid UTF-8 (a lone surrogate elsewhere)
//	control    a byte below 0x20, or 0x7f
//	separator  the registry's separator
//	brace      '{' or '}': it would give the key a Cluster hash tag and
//	           move it to another slot
//	kind       not a value of the placeholder's type (see keytmpl: int is
//	           -?[0-9]+, hex [0-9a-fA-F]+, uuid 8-4-4-4-12 hex, region
//	           [1-9][0-9]{5}, date yyyyMMdd, enum one listed value)
//	too-long   the whole key is longer than max_key_bytes (in UTF-8 bytes)
//
// A {x:hash} value is only checked for empty and encoding: it never
// reaches the key, so it may hold anything, separators included.
//
// # Hash
//
// A {x:hash} placeholder stores the first 8 bytes of the SHA-256 of the
// value's UTF-8 bytes, as 16 lower-case hex digits: "13800138000" is
// stored as "a6942f9771d67f34" in every language (Java MessageDigest,
// Python hashlib, Node crypto), and keytmpl matches exactly that form. It
// keeps personal data (phone numbers, e-mail addresses) out of keys while
// the same input still finds the same key. It is not encryption: a phone
// number can be recovered from its hash by trying them all, so keep the
// keys themselves away from people who should not see the numbers.
package keybuild
