package investigate

import (
	"net"
	"strconv"
	"strings"
)

// Client is one connection of CLIENT LIST.
type Client struct {
	ID      int64  `json:"id"`
	Addr    string `json:"addr"`
	Name    string `json:"name,omitempty"`
	LibName string `json:"lib_name,omitempty"` // Redis 7.2+ (CLIENT SETINFO)
	LibVer  string `json:"lib_ver,omitempty"`
	User    string `json:"user,omitempty"`
	Flags   string `json:"-"`
}

// ParseClientList parses the reply of CLIENT LIST: one client a line,
// space-separated field=value pairs. Lines without an addr are skipped.
func ParseClientList(text string) []Client {
	var out []Client
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		var c Client
		for _, kv := range strings.Split(line, " ") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			switch k {
			case "id":
				c.ID, _ = strconv.ParseInt(v, 10, 64)
			case "addr":
				c.Addr = v
			case "name":
				c.Name = v
			case "lib-name":
				c.LibName = v
			case "lib-ver":
				c.LibVer = v
			case "user":
				c.User = v
			case "flags":
				c.Flags = v
			}
		}
		if c.Addr != "" {
			out = append(out, c)
		}
	}
	return out
}

// Host is the client's host without the port; for a unix-socket client,
// the socket path.
func (c *Client) Host() string { return hostOf(c.Addr) }

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// Service is who the client is, for grouping connections into writers:
// its name (the SDK names connections after the service), else its
// library, user and host together. Connections of one service from one
// host share a Service; unnamed services on one host cannot be told
// apart.
func (c *Client) Service() string {
	if c.Name != "" {
		return c.Name
	}
	var b strings.Builder
	b.WriteString(c.Host())
	if c.User != "" && c.User != "default" {
		b.WriteString(" user " + c.User)
	}
	if c.LibName != "" {
		b.WriteString(" lib " + c.LibName)
	}
	return b.String()
}

// Named reports whether the client set a name (CLIENT SETNAME).
func (c *Client) Named() bool { return c.Name != "" }

// monitorSourceAddr turns a MONITOR source into the addr CLIENT LIST
// prints for the same connection: the same for TCP, "path:0" for a unix
// socket ("unix:/tmp/r.sock" → "/tmp/r.sock:0").
func monitorSourceAddr(source string) string {
	if p, ok := strings.CutPrefix(source, "unix:"); ok {
		return p + ":0"
	}
	return source
}
