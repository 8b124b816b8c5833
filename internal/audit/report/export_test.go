package report

// AppendFindingJSON is appendFindingJSON, for the tests that hold it to
// encoding/json's bytes.
var AppendFindingJSON = appendFindingJSON

// AppendFindingsJSON encodes each of fs with one findingEncoder, in
// order, as the report writes them.
func AppendFindingsJSON(fs []Finding) []string {
	var e findingEncoder
	out := make([]string, len(fs))
	for i := range fs {
		out[i] = string(e.append(nil, &fs[i]))
	}
	return out
}

// AppendTopKeysJSON encodes a sequence of top keys with one encoder, each
// on its own.
func AppendTopKeysJSON(ks []TopKey) []string {
	var e findingEncoder
	var out []string
	for i := range ks {
		out = append(out, string(e.appendTopKey(nil, &ks[i])))
	}
	return out
}

// AppendStateHotJSON is appendStateHot.
var AppendStateHotJSON = appendStateHot

// AppendGroupJSON, AppendPrefixJSON and AppendStateGroupJSON are the
// report's own encoders of those elements.
var (
	AppendGroupJSON      = appendGroup
	AppendPrefixJSON     = appendPrefix
	AppendStateGroupJSON = appendStateGroup
)
