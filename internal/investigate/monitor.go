package investigate

import "github.com/keyguard/keyguard/internal/monitor"

// Line is one line of MONITOR output:
//
//	1700000000.123456 [0 127.0.0.1:50000] "hset" "promo:sku:1001" "a" "1"
//
// Source is the client's address as the server prints it: "host:port",
// "[ipv6]:port", "unix:/path/to.sock", or SourceLua for a command a
// script ran (the script's caller is the script call just before it).
type Line = monitor.Line

// SourceLua is the source of a command run by a script or a function.
const SourceLua = monitor.SourceLua
