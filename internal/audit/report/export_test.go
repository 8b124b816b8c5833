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
