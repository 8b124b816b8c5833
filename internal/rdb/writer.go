package rdb

import (
	"fmt"
	"strconv"
	"strings"
)

// Writer is the server that wrote the file, from its redis-ver or
// valkey-ver aux field: "Redis" or "Valkey" and the version ("7.4.5").
// Without either field, version is "" and server what the format says
// ("Valkey" for VALKEY080, else "Redis").
func (m *Meta) Writer() (server, version string) {
	if v, ok := m.AuxValue("valkey-ver"); ok {
		return "Valkey", v
	}
	if m.Valkey {
		return "Valkey", ""
	}
	v, _ := m.AuxValue("redis-ver")
	return "Redis", v
}

// SizedAs says whose memory Record.MemoryEstimate gives for the keys of
// this file: the server it models ("Redis 7.0" for files of RDB 10 and
// older, "Redis 7.2" from RDB 11 on, whose sets and small lists are
// listpacks), and, when the file's writer holds keys in a way the model
// does not follow, a sentence saying how (empty otherwise). Call it once
// the aux fields are read (after the first record).
func (m *Meta) SizedAs() (model, differs string) {
	model = "Redis 7.0"
	if m.Version >= 11 {
		model = "Redis 7.2"
	}
	server, ver := m.Writer()
	major, minor, known := versionOf(ver)
	writer := server
	if ver != "" {
		writer += " " + ver
	}
	switch {
	case known && major >= 100:
		// A development build (255.255.255, 999.999.999): the format
		// version decides the model.
	case server == "Valkey" && (!known && m.Valkey || known && (major > 8 || major == 8 && minor >= 1)):
		differs = "embeds each key in its value's object and keeps keys in its own hash table, without a dict entry per key: its MEMORY USAGE per key is lower, by an amount not modelled"
	case server == "Valkey" && known && major == 8:
		differs = "embeds each key in its dict entry: its MEMORY USAGE per key differs, by an amount not modelled"
	case server == "Redis" && known && (major > 8 || major == 8 && minor >= 2):
		differs = "embeds each key, and small values, in one object with the value (kvobj): its MEMORY USAGE per key differs, by an amount not modelled"
	}
	if differs != "" {
		differs = writer + " wrote the file and " + differs
	}
	return model, differs
}

// versionOf reads "major.minor[.patch]".
func versionOf(v string) (major, minor int, ok bool) {
	a, b, _ := strings.Cut(v, ".")
	b, _, _ = strings.Cut(b, ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return x, y, err1 == nil && err2 == nil
}

// SizingNote is the sentence a report gives on the memory of a file's
// keys: the server whose MEMORY USAGE it follows, and how the writer
// differs ("" when the writer holds keys as the model does: Redis up to
// 8.0, Valkey 7.2).
func (m *Meta) SizingNote(name string) string {
	model, differs := m.SizedAs()
	if differs == "" {
		return ""
	}
	return fmt.Sprintf("%s: memory is MEMORY USAGE as %s holds the keys after loading the file; %s", name, model, differs)
}
