package inventory

import (
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/valueform"
)

// Record is one key as a walker saw it. Unknown numbers are -1 (TTL: 0),
// so a walker that cannot probe something says so.
type Record struct {
	Key      string        // any bytes
	DB       int           // logical database
	Node     string        // "host:port", or the RDB file name
	Type     string        // string|hash|list|set|zset|stream|module (or a module's type name); "" unknown
	Encoding string        // OBJECT ENCODING, optional
	Bytes    int64         // MEMORY USAGE or the RDB estimate; -1 unknown
	Elements int64         // STRLEN/HLEN/LLEN/SCARD/ZCARD/XLEN; -1 unknown
	TTL      time.Duration // remaining; -1 no TTL (PTTL -1); 0 unknown
	Freq     int           // LFU counter (OBJECT FREQ); -1 unknown
	NS       string        // value of the reserved hash field __ns__ when probed
	HasNS    bool          // NS was probed and present
	NSProbed bool          // the walker asked for __ns__ (Class.NS was true)
	// Form is what a string value whose head the walker read holds (a
	// JSON object, a number, text…); Unknown when it was not read. A
	// template that declares fields holds JSON objects: a value of
	// another form is a value-format finding.
	Form valueform.Form // beside the bools: in their padding
	// Fields are sampled hash field names, or the top-level JSON keys of a
	// string value, for the field census. Give them when Class.Fields
	// said so; nil otherwise (a key Class.Fields asked for that comes
	// with nil Fields counts as a value without field names). Add does
	// not keep the slice.
	Fields []string
	// Set, when given, stands for Fields: the same names, hashed and
	// normalized by the walker (FieldSets), so that a set's names cross
	// to the aggregator once. Give Set or Fields, not both.
	Set *FieldSet
	// Weight is how many keys of the keyspace this record stands for in
	// a weighted sample (Options.Weighted): the inverse of the
	// probability it was probed with. 0 counts as 1.
	Weight int64
}

// Options tune the aggregation. The zero value gives the defaults.
type Options struct {
	MaxFindings int     // findings kept per rule (the rest are counted); default 10000
	TopKeys     int     // top keys by memory; default 50
	HotKeys     int     // size of the hot-key top set; default 20
	Sampled     bool    // records are a random sample: counts are extrapolated and marked as estimates
	SampleRatio float64 // fraction of the keyspace the sample covers (0 < r <= 1)
	// Weighted: the sample's records carry their Weight (each key probed
	// with a probability of its own, as a stratified sample does): counts
	// are sums of weights, already extrapolated, and the memory margin
	// comes from each record's probability. SampleRatio is then the share
	// of the keyspace probed, for the report.
	Weighted bool

	// Extensions beyond the shared API.
	HotFreqFloor int // LFU counter a top-set key needs to be a hot-key finding; default 32 (a few thousand recent hits)
	MaxGroups    int // inferred families of unregistered keys before folding into "(other)"; default 10000

	// SkipFields: read no value's field names (no census: the schema,
	// mixed-schema and value-format rules are not checked, suggestions
	// list no fields). The walkers then skip the field reads, which are most of
	// what checking value formats costs.
	SkipFields bool

	// FieldsEveryValue: read the field names of every value of a field
	// type, never giving a template or family up because its values
	// mostly held none. The censuses then count every value with names,
	// the same whatever the order of the keys and however they were
	// split among aggregators. For walkers that hold each value anyway
	// (keyguard rdb), where a value without names costs a glance; the
	// live audit, which pays a command per read, gives up.
	FieldsEveryValue bool

	// UniqueKeys: the walk offers each key (name and database) at most
	// once, as one RDB file does (Redis refuses to load a file that
	// repeats a key). The top and hot lists then do not look for a key
	// offered twice. Not for a live SCAN, which may return a key twice,
	// nor for several files, which may share keys.
	UniqueKeys bool

	// NoRegistry: the registry is an empty stand-in (none was given or
	// found). Keys are grouped by inferred family alone; the findings only
	// a registry can decide (unregistered, domain) are not raised, and the
	// report lists what went unchecked (report.NoRegistryChecks).
	NoRegistry bool

	// Keys, when set, receives one row per key added (--keys): each
	// Aggregator writes through a buffer of its own.
	Keys *report.KeyExport
}

// Defaults.
const (
	DefaultMaxFindings  = 10000
	DefaultTopKeys      = 50
	DefaultHotKeys      = 20
	DefaultHotFreqFloor = 32
	DefaultMaxGroups    = 10000
)

// Bounds on what is retained per key, so that a 1 MB key name cannot
// multiply through the capped lists.
const (
	maxKeepKey        = 1024 // bytes of a key name kept in findings and top lists
	maxGroupName      = 256  // longer inferred templates are counted in "(other)"
	maxKeepText       = 512  // message and hint bytes kept
	maxFieldsPerKey   = 32   // field names kept per sampled key
	maxFieldName      = 64   // bytes of a field name kept
	maxSampleKey      = 512  // keys longer than this are not sampled for fields
	maxFieldBytes     = 512  // bytes of field names kept per sampled key
	maxFamilyCensuses = 64   // inferred families that get a field census
	fieldMissLimit    = 32   // asked keys without field names before a template or family may be given up
	maxInferredMisses = maxFamilyCensuses * fieldMissLimit
)

func (o Options) withDefaults() Options {
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	if o.TopKeys <= 0 {
		o.TopKeys = DefaultTopKeys
	}
	if o.HotKeys <= 0 {
		o.HotKeys = DefaultHotKeys
	}
	if o.HotFreqFloor <= 0 {
		o.HotFreqFloor = DefaultHotFreqFloor
	}
	if o.MaxGroups <= 0 {
		o.MaxGroups = DefaultMaxGroups
	}
	if !(o.SampleRatio >= 0 && o.SampleRatio <= 1) { // NaN too
		o.SampleRatio = 0
	}
	return o
}
