module example.com/svc

go 1.26.0

require (
	github.com/keyguard/keyguard v0.0.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/keyguard/keyguard => ../..

require (
	github.com/gomodule/redigo v1.9.2
	github.com/redis/rueidis v1.0.0
	github.com/redis/rueidis/rueidiscompat v1.0.0
)

replace (
	github.com/gomodule/redigo => ./.stubs/redigo
	github.com/redis/rueidis => ./.stubs/rueidis
	github.com/redis/rueidis/rueidiscompat => ./.stubs/rueidiscompat
)
