// Command walkload writes the keyspace of bench/walk.sh: N keys
// old:string:<i> (TTL one hour) and N keys other:<i>, with a go-redis
// pipeline, to one server or (several addresses) a Cluster.
//
//	walkload 127.0.0.1:6379 100000
//	walkload 127.0.0.1:7000,127.0.0.1:7001 100000
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: walkload addr[,addr…] N")
		os.Exit(2)
	}
	addrs := strings.Split(os.Args[1], ",")
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintf(os.Stderr, "walkload: N %q is not a count\n", os.Args[2])
		os.Exit(2)
	}
	if err := load(context.Background(), addrs, n); err != nil {
		fmt.Fprintln(os.Stderr, "walkload:", err)
		os.Exit(1)
	}
}

func load(ctx context.Context, addrs []string, n int) error {
	var c redis.UniversalClient
	if len(addrs) > 1 {
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	} else {
		c = redis.NewClient(&redis.Options{Addr: addrs[0]})
	}
	defer c.Close()
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("old:string:%d", i), i, time.Hour)
		p.Set(ctx, fmt.Sprintf("other:%d", i), i, 0)
		if p.Len() >= 5000 {
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
	}
	_, err := p.Exec(ctx)
	return err
}
