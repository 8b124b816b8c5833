// Package rdb is a streaming decoder for Redis RDB snapshots, versions 1
// to 12 (Redis 2.x to 7.4, Valkey 7 and 8) and Valkey 9.0's own format
// (VALKEY080, whose hashes may carry field expiry). It reads one key at a
// time from an io.Reader with memory bounded whatever the file size,
// verifies the CRC64 trailer, and reports for every key its type, encoding, length, expiry,
// LRU/LFU data and an estimate of what MEMORY USAGE says for it.
//
// Happy path:
//
//	dec := rdb.NewDecoder(f, rdb.Options{FieldSample: 32, WatchFields: []string{"__ns__"}})
//	rec, err := dec.Next() // one *Record per key; io.EOF after the last one
//	meta := dec.Meta()     // version, aux fields, resize hints, checksum
//
// The decoder is pure: no Redis connection, no global mutable state, no
// goroutines. Values are skipped, not kept, unless Options ask for hash
// field names, watched fields, JSON keys of string values or (for tests)
// whole small values. Lists, sets, sorted sets and hashes without elements
// are skipped, as Redis skips them when it loads the file, and counted in
// Meta.EmptySkipped (Options.KeepEmpty returns them). Malformed input of
// any kind ends in a *FormatError naming the byte offset (errors.Is io.ErrUnexpectedEOF when truncated,
// ErrChecksum, ErrUnsupported, ErrCorrupt), never a panic, and no length
// read from the file is trusted for an allocation.
//
// Values nobody reads are not decoded: a listpack of which only the
// element count is needed (a set, a sorted set, a list node, a hash
// without sampled or watched fields) is checked entry by entry without
// decoding its elements. Compressed ones are not inflated for that: such
// a listpack is inflated only as far as its header, an LZF string only as
// far as it takes to see that it is not a JSON object, so corruption
// inside them shows as a CRC64 mismatch at the end of the file rather
// than as a FormatError at the key. Options.ValueLimit turns these
// shortcuts off.
//
// # Memory model
//
// Record.MemoryEstimate follows what MEMORY USAGE key SAMPLES 0 reports on
// a 64-bit Redis 7.0 built with jemalloc (the default) once it has loaded
// the file, as a restarted server or a replica holds the key: the sum of
// objectComputeSize(), the key's sds allocation and sizeof(dictEntry).
// TestAgainstServer (every encoding Redis 7.0 writes) and TestRealFiles
// (the RDB files of the test suites of Redis, Valkey and three RDB
// libraries) compare it key by key with a live Redis 7.0 that loaded the
// file: equal to the byte for every key but skiplist sorted sets, within
// 5% of those (node levels are random).
//
//   - Allocation sizes are jemalloc size classes (8, 16, then 16-byte steps
//     to 64, then four classes per doubling: 80, 96, 112, 128, 160, ...),
//     which is what zmalloc_size() returns.
//   - An sds string of length n takes class(hdr+n+1), hdr being 1 (n < 32),
//     3 (< 256), 5 (< 64 Ki), 9 (< 4 Gi) or 17 bytes.
//   - Every key: dictEntry (24) + its sds.
//   - Strings: int-encoded 16 (the robj; any canonical integer of at most
//     20 characters is int-encoded, as tryObjectEncoding does); embstr (up
//     to 44 bytes) class(16+3+n+1); raw 16 + sds(n).
//   - listpack and intset values: robj (16) + class(blob bytes). Encodings
//     Redis 7 converts on load (ziplist, zipmap, linked list) are sized as
//     the listpack (or, past 128 entries, hashtable or skiplist) Redis 7
//     builds from the same elements; so are hashes and sorted sets stored
//     element by element that fit a listpack (at most 128 entries of at
//     most 64 bytes), and sets of at most 512 integers (an intset).
//   - quicklist: robj + quicklist (40) + per node quicklistNode (40) +
//     class(node bytes); linked lists are packed into 8 KiB nodes
//     (list-max-listpack-size -2). Under Options.ListCompressDepth (the
//     server's list-compress-depth) an inner node stored LZF-compressed in
//     the file is sized as the compressed node the server keeps,
//     class(8 + compressed bytes).
//   - hashtable sets and hashes: robj + dict (56) + 8 per table slot (the
//     next power of two >= elements, at least 4) + per element dictEntry
//     (24) + the member's sds (and the value's, for hashes).
//   - skiplist sorted sets: robj + zset (16) + zskiplist (32) + dict +
//     slots + header node class(24+32*16) + per element sds + dictEntry +
//     the expected node allocation for levels drawn with p=1/4 (53 bytes).
//   - streams: robj + stream (80) + Redis's radix-tree formula (16 per ID
//     plus 244 per rax node, nodes counted exactly from the IDs in the
//     file) + class(listpack) per node, as loaded (the server that wrote
//     the file may hold up to 4 KiB more in the last node, which XADD
//     preallocates: stream-node-max-bytes); per consumer group 40, its
//     PEL tree and 24 per pending entry; per consumer 24 (32 from RDB 11,
//     Redis 7.2), its name length and its PEL tree.
//   - module values: robj + the serialized size (the module's own
//     mem_usage callback is not available offline).
//
// What the file cannot tell: the loading server's configuration (the
// default thresholds and list-compress-depth 0 are assumed unless
// Options say otherwise), quicklist nodes of files older than Redis 7
// kept compressed (their compressed size in memory is not in the file),
// what the writing server held beyond what it loads (sds spare room left
// by APPEND or SETRANGE, preallocated stream nodes, hash tables caught
// mid-rehash), and the 16 bytes per key Redis Cluster adds in 7.0.
//
// Files of RDB 11 and later (Redis 7.2+, Valkey) are sized as Redis 7.2
// holds them: sets of at most 128 members of at most 64 bytes and small
// lists are listpacks, consumers take 32 bytes; the rest of the model is
// 7.0's, which MEMORY USAGE on 7.2 through 8.0 still follows (it counts a
// dictEntry per set member and key). Meta.SizedAs names the server whose
// figure this is, and says how the writer differs where it holds keys in
// a way not modelled: Valkey 8.0 embeds keys in their dict entries,
// Valkey 8.1 and 9 in their objects in a new hash table, Redis 8.2 in one
// object with the value (kvobj). Hash field TTLs (Redis 7.4, Valkey 9)
// are estimated at 8 bytes per field; the scores of sorted sets converted
// to listpacks on load are written as Redis 7.0 writes them (%.17g).
//
// It is pure (no network) and imports only internal/jsonkeys; the audits
// (snapshot, live's size model) import it, never the reverse.
package rdb
