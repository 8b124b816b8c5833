package finding

import "strings"

// DefaultDocsBase is where the docs/ directory is published; HelpURI
// joins it with a rule's DocURL. A team that mirrors the docs passes its
// own base.
const DefaultDocsBase = "https://github.com/keyguard/keyguard/blob/main/"

// Rules returns every rule ID, in the order docs/rules.md documents them.
func Rules() []string {
	return []string{
		Overlap, Domain, NoTTL,
		Case, Charset, Length, Separator, LeadingID, Timestamp,
		PII, Unregistered, TypeMismatch, TTLMismatch, BigKey, HotKey,
		GuardOwnerless, GuardForeign, MixedSchema, Schema, ValueFormat,
		UnregisteredCode, RawKey,
		SecondWriter, ForeignWriter, TTLFluctuation,
		TTLPolicy, KeyModel, Owner, FillIn, Load,
	}
}

// Summary is a rule's one-line description (SARIF shortDescription), or ""
// for an unknown rule.
func Summary(rule string) string {
	switch rule {
	case Overlap:
		return "Two templates can produce the same key"
	case Domain:
		return "The first segment is not a declared domain"
	case NoTTL:
		return "No TTL and not persistent"
	case Case:
		return "Upper-case letters in a key"
	case Charset:
		return "Characters outside a-z 0-9 : _ - . in a key"
	case Length:
		return "A key longer than the policy's max_key_bytes"
	case Separator:
		return "A key without the separator"
	case LeadingID:
		return "The key starts with an ID instead of a domain"
	case Timestamp:
		return "A time stamp written into the key name"
	case PII:
		return "Personal data (phone, e-mail, ID card) in a key in clear"
	case Unregistered:
		return "A key that matches no template"
	case TypeMismatch:
		return "The Redis type differs from the template's type"
	case TTLMismatch:
		return "The remaining TTL does not fit the template's TTL"
	case BigKey:
		return "A key over the policy's size or element limit"
	case HotKey:
		return "A key among the most accessed"
	case GuardOwnerless:
		return "A guarded hash without its __ns__ owner field"
	case GuardForeign:
		return "A guarded hash whose __ns__ names another owner"
	case MixedSchema:
		return "A value that mixes two writers' field sets"
	case Schema:
		return "A value with fields its template does not declare"
	case ValueFormat:
		return "A string value that is not the JSON object its template declares fields of"
	case UnregisteredCode:
		return "Code uses a key that matches no template"
	case RawKey:
		return "Code builds a key by hand instead of with the generated builder"
	case SecondWriter:
		return "Two services wrote one key during an investigation"
	case ForeignWriter:
		return "A service wrote a key of a template its team does not own"
	case TTLFluctuation:
		return "Writes gave one key different TTLs"
	case TTLPolicy:
		return "A TTL setting that contradicts itself or the domain's limits"
	case KeyModel:
		return "domain, entityType or attribute fields that disagree with the key"
	case Owner:
		return "A template nobody owns"
	case FillIn:
		return "A registry value still FILL-IN"
	case Load:
		return "The registry file does not load"
	}
	return ""
}

// Anchor is the fragment of rule's section in docs/rules.md: the rule ID
// slugged the way GitHub slugs headings (lower case; characters other
// than letters, digits, '-' and '_' dropped), so naming/case is
// "namingcase". The page gives each section this id explicitly.
func Anchor(rule string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(rule) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// DocURL is the link to rule's documentation, relative to the
// repository root: docs/rules.md#<anchor>.
func DocURL(rule string) string { return "docs/rules.md#" + Anchor(rule) }

// HelpURI is DocURL under base (DefaultDocsBase when empty), for tools that
// need an absolute link, such as SARIF's helpUri.
func HelpURI(base, rule string) string {
	if base == "" {
		base = DefaultDocsBase
	}
	return strings.TrimSuffix(base, "/") + "/" + DocURL(rule)
}
