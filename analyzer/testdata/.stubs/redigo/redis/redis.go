// Package redis has the shapes of redigo's connection, pool and reply
// helpers.
package redis

import (
	"context"
	"time"
)

// Conn is a connection.
type Conn interface {
	Close() error
	Err() error
	Do(commandName string, args ...interface{}) (reply interface{}, err error)
	Send(commandName string, args ...interface{}) error
	Flush() error
	Receive() (reply interface{}, err error)
}

// Pool is a pool of connections.
type Pool struct {
	Dial func() (Conn, error)
}

func (p *Pool) Get() Conn                                    { return nil }
func (p *Pool) GetContext(ctx context.Context) (Conn, error) { return nil, nil }

// Dial opens a connection.
func Dial(network, address string) (Conn, error) { return nil, nil }

// DoContext sends a command with a context.
func DoContext(c Conn, ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	return nil, nil
}

// DoWithTimeout sends a command with a timeout.
func DoWithTimeout(c Conn, timeout time.Duration, cmd string, args ...interface{}) (interface{}, error) {
	return nil, nil
}

// String converts a reply.
func String(reply interface{}, err error) (string, error) { return "", err }

// Int converts a reply.
func Int(reply interface{}, err error) (int, error) { return 0, err }

// Script is a Lua script whose first keyCount arguments are keys.
type Script struct {
	keyCount int
	src      string
}

// NewScript returns a script; keyCount < 0: the count is the first argument.
func NewScript(keyCount int, src string) *Script { return &Script{keyCount, src} }

func (s *Script) Do(c Conn, keysAndArgs ...interface{}) (interface{}, error) { return nil, nil }
func (s *Script) Send(c Conn, keysAndArgs ...interface{}) error              { return nil }
func (s *Script) DoContext(ctx context.Context, c Conn, keysAndArgs ...interface{}) (interface{}, error) {
	return nil, nil
}

// Args is a list of command arguments.
type Args []interface{}

// Add appends values.
func (args Args) Add(value ...interface{}) Args { return append(args, value...) }

// AddFlat appends the fields of a struct or the entries of a map.
func (args Args) AddFlat(v interface{}) Args { return append(args, v) }
