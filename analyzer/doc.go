// Package analyzer is keylint, a go/analysis analyzer that finds Redis keys
// built by hand: calls into github.com/redis/go-redis/v9 (Cmdable methods on
// clients, pipelines and transactions, Eval/EvalSha/FCall key lists, Watch,
// Do with a constant command name, ZStore and XAddArgs key fields), into
// rueidis (the key arguments of its command builders,
// client.B().Get().Key(k).Build(), and rueidiscompat's go-redis-like
// methods), into redigo (conn.Do("SET", key, v), Send, DoContext,
// DoWithTimeout with a constant command name: the keys at the command's
// own key positions; a NewScript(n, src)'s first n arguments) and into keyguard's SDK (guard, ttlpolicy) whose key
// is not the String() of a key from the generated builder (keyguard gen
// --lang go).
//
//	reg, _ := registry.Load("keyguard.yaml")
//	a := analyzer.New(reg)          // or analyzer.NewWithFlags(): -registry FILE
//	singlechecker.Main(a)           // cmd/keylint; also go vet -vettool
//
// The key's shape is rebuilt from string literals, constants, +,
// fmt.Sprintf, fmt.Sprint, strings.Join of a slice literal, strconv's
// integer formatting and variables assigned once (package-level ones too),
// then compared with the registry as package scancode/keyshape describes:
// raw-key when a registered template holds it, with a suggested fix calling
// the template's builder when that builder cannot fail and its package is
// imported by the package; unregistered-code when no template does.
//
// A function that hands one of its string or []string parameters to Redis
// whole (func get(ctx, rdb, key string) { rdb.Get(ctx, key) }, a script
// wrapper taking keys []string) is not reported; its callers' arguments are
// checked instead, in other packages too (the fact KeyParams), and their
// findings name it ("via store.Get"). A function whose returns all give one
// key shape (func PendingKey(q string) string { return "asynq:{" + q +
// "}:pending" }) gives its callers that shape with their arguments in place
// of its parameters (the fact KeyShape). A []string of keys is followed
// through a literal and append; a package's own interface whose methods
// return go-redis commands is a client. Keys held in slices built in a loop
// and keys reached through function values are not checked.
//
// cmd/keylint takes the flag as -registry FILE, under go vet too
// (go vet -vettool=$(which keylint) -registry=$PWD/keyguard.yaml ./...);
// a multichecker that bundles the analyzer with others names it
// -keylint.registry. go vet runs the tool in each package's directory, so
// give an absolute path, or none: the analyzer then takes KEYGUARD_REGISTRY
// or the keyguard.yaml of the directory or its nearest parent.
package analyzer
