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
