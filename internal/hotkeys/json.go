package hotkeys

import (
	"io"
	"strconv"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// WriteJSON writes the report as one indented JSON document: the bytes
// encoding/json gives the whole Report with a two-space indent and no
// HTML escaping, streamed, so a report of --top 100,000 keys is never
// whole in memory (TestWriteJSONAsEncoded holds it to encoding/json).
func (r *Report) WriteJSON(w io.Writer) error {
	o := jsonout.NewObject(w)
	o.Field("target", r.Target)
	o.Field("generated_at", r.GeneratedAt)
	o.Field("window", r.Window)
	o.Field("min_rate", r.MinRate)
	o.Field("min_freq", r.MinFreq)
	o.Field("sdk", &r.SDK)
	if r.LFU != nil {
		o.Field("lfu", r.LFU)
	}
	if r.Monitor != nil {
		o.Field("monitor", r.Monitor)
	}
	var ke keyHeatEncoder
	jsonout.Array(o, "keys", r.Keys, ke.append)
	o.Field("templates", r.Templates)
	jsonout.Array(o, "findings", r.Findings, report.FindingAppender())
	if r.NoRegistry {
		o.Field("no_registry", r.NoRegistry)
	}
	return o.Close()
}

// keyHeatEncoder appends a KeyHeat as encoding/json writes an element of
// the report's keys, keeping the encoded form of the last template,
// family, owner and node: the keys of a family share them.
type keyHeatEncoder struct{ strs jsonout.StringCache }

const (
	keyIndent  = "\n      "   // a field of an element of keys
	keyIndent2 = "\n        " // a field of an object or array in one
)

func (e *keyHeatEncoder) append(b []byte, k *KeyHeat) []byte {
	b = append(b, "{"+keyIndent+`"key": `...)
	b = jsonout.AppendString(b, k.Key)
	if k.DB != nil {
		b = strconv.AppendInt(append(b, ","+keyIndent+`"db": `...), int64(*k.DB), 10)
	}
	b = e.strs.Append(append(b, ","+keyIndent+`"template": `...), 0, k.Template)
	b = e.field(b, 1, "family", k.Family)
	b = e.field(b, 2, "owner", k.Owner)
	if k.Region != "" {
		b = jsonout.AppendString(append(b, ","+keyIndent+`"region": `...), k.Region)
	}
	if h := k.Hot; h != nil {
		b = append(b, ","+keyIndent+`"hot": {`...)
		first := true
		if h.Replicas != 0 {
			b = strconv.AppendInt(append(b, keyIndent2+`"replicas": `...), int64(h.Replicas), 10)
			first = false
		}
		if h.LocalTTL != "" {
			if !first {
				b = append(b, ',')
			}
			b = jsonout.AppendString(append(b, keyIndent2+`"local_ttl": `...), h.LocalTTL)
			first = false
		}
		if !first {
			b = append(b, keyIndent...)
		}
		b = append(b, '}')
	}
	b = jsonout.AppendFloat(append(b, ","+keyIndent+`"rate": `...), k.Rate)
	if k.Instances != 0 {
		b = strconv.AppendInt(append(b, ","+keyIndent+`"instances": `...), int64(k.Instances), 10)
	}
	if len(k.Services) > 0 {
		b = append(b, ","+keyIndent+`"services": [`...)
		for i, s := range k.Services {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonout.AppendString(append(b, keyIndent2...), s)
		}
		b = append(b, keyIndent+"]"...)
	}
	if k.MonitorRate != 0 {
		b = jsonout.AppendFloat(append(b, ","+keyIndent+`"monitor_rate": `...), k.MonitorRate)
	}
	b = strconv.AppendInt(append(b, ","+keyIndent+`"lfu_freq": `...), int64(k.Freq), 10)
	b = e.field(b, 3, "node", k.Node)
	b = strconv.AppendBool(append(b, ","+keyIndent+`"hot_key": `...), k.IsHot)
	return append(b, "\n    }"...)
}

// field appends a string field unless v is empty (omitempty), through
// the cache slot i.
func (e *keyHeatEncoder) field(b []byte, i int, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ","+keyIndent+`"`...)
	b = append(b, name...)
	return e.strs.Append(append(b, `": `...), i, v)
}
