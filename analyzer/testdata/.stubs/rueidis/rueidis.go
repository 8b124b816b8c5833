// Package rueidis has the shapes of rueidis's client: B() builds a
// command, Do and DoMulti send it.
package rueidis

import (
	"context"

	"github.com/redis/rueidis/internal/cmds"
)

type (
	Builder   = cmds.Builder
	Completed = cmds.Completed
)

// RedisResult is a reply.
type RedisResult struct{ err error }

func (r RedisResult) ToString() (string, error) { return "", r.err }
func (r RedisResult) Error() error              { return r.err }

// Client is rueidis's client.
type Client interface {
	B() Builder
	Do(ctx context.Context, cmd Completed) (resp RedisResult)
	DoMulti(ctx context.Context, multi ...Completed) (resp []RedisResult)
	Close()
}

// ClientOption configures NewClient.
type ClientOption struct{ InitAddress []string }

// NewClient returns a client.
func NewClient(option ClientOption) (Client, error) { return nil, nil }
