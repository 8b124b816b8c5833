// Package keytmpl parses Redis key templates, matches concrete keys against
// them, and relates two templates exactly (disjoint, equal, one more
// specific, or overlapping) with a witness key that both match.
//
//	t, err := keytmpl.Parse("order:order:{orderId:int}:base", ':')
//	caps, ok := t.Match("order:order:1001:base") // caps[0] = {orderId 1001}
//	m := keytmpl.Compile([]*keytmpl.Template{t, u}); i := m.Lookup(key)
//
// # Syntax
//
// A template is literal text with placeholders. The separator (usually ':')
// splits it into segments; a placeholder matches a non-empty part of one
// segment and never the separator. Placeholders:
//
//	{name}              any non-empty text without the separator
//	{name:int}          -?[0-9]+
//	{name:hex}          [0-9a-fA-F]+
//	{name:uuid}         8-4-4-4-12 hex digits
//	{name:region}       6-digit administrative code, [1-9][0-9]{5}
//	{name:date}         yyyyMMdd, month 01-12, day 01-31
//	{name:enum(A,B)}    exactly one of the listed values
//	{name:hash}         16 lower-case hex digits: the first 8 bytes of the
//	                    SHA-256 of the raw value (the builder hashes it)
//
// A placeholder may share a segment with literal text: "auth:session:u{userId}".
//
// # Hash tags
//
// Redis Cluster hash tags are also written with braces. In a template a
// literal brace is doubled: "{{order:{id}}}:items" is the literal "{order:",
// the placeholder id, and the literal "}", so it produces the concrete key
// "{order:1001}:items", whose hash tag is "order:1001". The matcher and the
// builder read templates through this one parser, so they agree.
//
// It is part of the SDK and pure: it imports only internal/glob and
// internal/swar.
package keytmpl
