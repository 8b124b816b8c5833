package guard

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrConflict matches every *ConflictError with errors.Is: the key belongs
// to another namespace or holds another type. Retrying cannot help.
var ErrConflict = errors.New("guard: namespace conflict")

// ErrReservedField is returned when a business field is named like the
// reserved owner field (ReservedField). Nothing is sent to Redis.
var ErrReservedField = errors.New("guard: field name " + ReservedField + " is reserved for the owner namespace; rename the business field")

// ConflictError reports a guarded key that this namespace may not touch:
// either another namespace owns it (Owner is set) or another writer stores a
// different type under it (FoundType is set, e.g. "string"). Nothing was
// written. It matches ErrConflict with errors.Is.
type ConflictError struct {
	Key       string // the guarded key
	Owner     string // the namespace found in the reserved field; "" for a type conflict
	FoundType string // the Redis type found when it is not a hash; "" for an owner conflict
	Namespace string // the namespace that was refused (ours)
	Op        string // "set", "get", "getall", "owner" or "delete"
}

func (e *ConflictError) Error() string {
	if e.FoundType != "" {
		return fmt.Sprintf("guard: %s %q by namespace %q refused: the key holds a %s, not a guarded hash "+
			"(another writer stores a different type under this key; give one of them another key template)",
			e.Op, e.Key, e.Namespace, e.FoundType)
	}
	return fmt.Sprintf("guard: %s %q by namespace %q refused: the key belongs to namespace %q "+
		"(two services build the same key; give one of them its own key template)",
		e.Op, e.Key, e.Namespace, e.Owner)
}

// Is makes errors.Is(err, ErrConflict) true for every *ConflictError.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Script error reply prefixes; see the header of guard.lua.
const (
	replyConflict = "KEYGUARD_CONFLICT "
	replyWrongTyp = "KEYGUARD_WRONGTYPE type="
	replyReserved = "KEYGUARD_RESERVED"
	replyNoScript = "NOSCRIPT"
)

// scriptError turns a script error reply into a typed error. It returns
// nil when err is not one of the guard's replies.
func (g *Guard) scriptError(op, key string, err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return nil
	}
	msg := rerr.Error()
	switch {
	case strings.HasPrefix(msg, replyConflict):
		return &ConflictError{Key: key, Owner: parseOwner(msg[len(replyConflict):]), Namespace: g.ns, Op: op}
	case strings.HasPrefix(msg, replyWrongTyp):
		return &ConflictError{Key: key, FoundType: msg[len(replyWrongTyp):], Namespace: g.ns, Op: op}
	case strings.HasPrefix(msg, replyReserved):
		return ErrReservedField
	}
	return nil
}

// parseOwner decodes "owner=<ns>" or "owner_hex=<hex>[ truncated]".
func parseOwner(s string) string {
	if v, ok := strings.CutPrefix(s, "owner="); ok {
		return v
	}
	v, ok := strings.CutPrefix(s, "owner_hex=")
	if !ok {
		return s
	}
	v, truncated := strings.CutSuffix(v, " truncated")
	b, err := hex.DecodeString(v)
	if err != nil {
		return s
	}
	if truncated {
		return string(b) + "…(truncated)"
	}
	return string(b)
}

func isNoScript(err error) bool { return redis.HasErrorPrefix(err, replyNoScript) }

func isWrongType(err error) bool { return redis.HasErrorPrefix(err, "WRONGTYPE") }

// wrapRedis wraps an error from Redis with the operation, the key and, where
// we recognise it, a hint.
func (g *Guard) wrapRedis(op, key string, err error) error {
	hint := ""
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "unknown command") && strings.Contains(msg, "eval"),
		strings.Contains(msg, "noperm") && strings.Contains(msg, "eval"):
		hint = " (the server refuses Lua scripts; use guard.Options{BestEffort: true}, which is not atomic)"
	case strings.Contains(msg, "noperm"):
		hint = " (the Redis user lacks a permission the guard needs: HGET/HSET/HSETNX/HMGET/HGETALL/PTTL/PEXPIRE/EXISTS/TYPE/DEL on the key and EVAL/EVALSHA/SCRIPT LOAD)"
	case strings.Contains(msg, "oom"):
		hint = " (Redis is at maxmemory; nothing was written)"
	}
	return fmt.Errorf("guard: %s %q: %w%s", op, key, err, hint)
}
