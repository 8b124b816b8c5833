package redishook

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// LibName is the CLIENT SETINFO library-name suffix keyguard sets: go-redis
// reports "go-redis(keyguard,<go version>)".
const LibName = "keyguard"

// NameConnections makes every connection of a client built from opt carry
// the service's name, so that CLIENT LIST and MONITOR attribute its
// commands: CLIENT SETNAME <service> (go-redis sends it when a connection
// opens; a failure fails the connection, and every Redis since 2.6.9 has
// it) and CLIENT SETINFO LIB-NAME with the suffix LibName (Redis 7.2+;
// go-redis ignores the error of a server that lacks it, such as 7.0).
func NameConnections(opt *redis.Options, service string) error {
	if err := validClientName(service); err != nil {
		return err
	}
	opt.ClientName = service
	opt.IdentitySuffix = LibName
	return nil
}

// NameClusterConnections is NameConnections for a Cluster client: every
// node connection is named.
func NameClusterConnections(opt *redis.ClusterOptions, service string) error {
	if err := validClientName(service); err != nil {
		return err
	}
	opt.ClientName = service
	opt.IdentitySuffix = LibName
	return nil
}

// validClientName applies CLIENT SETNAME's rule: printable ASCII without
// spaces.
func validClientName(s string) error {
	if s == "" {
		return fmt.Errorf("redishook: empty service name; name the connection after the service (the registry's owner spelling)")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return fmt.Errorf("redishook: service name %q: CLIENT SETNAME allows printable ASCII without spaces; use e.g. %q", s, "order-service")
		}
	}
	return nil
}
