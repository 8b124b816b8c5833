// Package redisconn opens the connections of the commands that talk to
// Redis and says, in one line, why one failed: it parses a --redis URL
// (never letting the password into a message), connects with a bounded
// first PING, and diagnoses refused credentials, a TLS/plain mismatch (by
// asking the port what it speaks) and the Cluster masters that are down
// (from CLUSTER NODES, through internal/topology).
//
// It is the tools' (commands', live audit's) and must not be imported by
// the SDK.
package redisconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/topology"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Target is a parsed --redis URL: the connection options of its
// first host, every host (Cluster seeds with --cluster), and the URL
// without its password for messages and reports.
type Target struct {
	Opts    *redis.Options // credentials, TLS, DB, timeouts; Addr is the first host
	Addrs   []string
	Cluster bool
	Display string
	DBSet   bool   // the URL names a database (/n)
	Flag    string // the flag the URL came from (--redis, --from-redis), for messages

	Sentinel *SentinelMaster // a redis-sentinel:// URL's master and Sentinels; nil otherwise
}

// FromFlags is the target of --redis (or KEYGUARD_REDIS) and --cluster,
// which must be given.
func FromFlags(raw string, cluster bool) (*Target, error) {
	if raw == "" {
		return nil, cli.Usagef("--redis URL is required (or set KEYGUARD_REDIS), e.g. --redis redis://127.0.0.1:6379")
	}
	return ParseURL(raw, cluster)
}

// ParseURL is ParseFlag for --redis and --cluster.
func ParseURL(raw string, cluster bool) (*Target, error) {
	return ParseFlag(raw, cluster, "--redis", "--cluster")
}

// schemes are the URL schemes ParseFlag reads.
var schemes = []string{"redis", "rediss", "unix", "redis-sentinel", "rediss-sentinel"}

// ParseFlag reads redis://[user:password@]host[:port][,host[:port]…][/db][?options]:
// rediss:// for TLS, unix://[user:password@]/path[?db=N] for a socket,
// and redis-sentinel://[user:password@]sentinel[,sentinel…][/db]#MASTER,
// whose parse (alone of them) talks to servers: it asks the Sentinels
// where the master is now. Options are go-redis ParseURL's (dial_timeout,
// read_timeout, skip_verify …) and redis-cli's TLS files (cacert, cert,
// key, sni). Several hosts are Cluster seeds and need cluster. A bare
// host:port is taken as redis://host:port.
//
// The user and password are split off the raw text and decoded here,
// before any parser sees the URL: a parser's error quotes the URL it was
// given, and that must never hold the password. Every message shows the
// URL through DisplayURL. Messages name the flags the URL and cluster came
// from.
func ParseFlag(raw string, cluster bool, flag, clusterFlag string) (*Target, error) {
	shown := DisplayURL(raw)
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		if scheme, _, ok := strings.Cut(s, ":/"); ok && slices.Contains(schemes, scheme) {
			return nil, cli.Usagef("%s %q: write the scheme with two slashes: %s://…", flag, shown, scheme)
		}
		s = "redis://" + s
	}
	scheme, rest, _ := strings.Cut(s, "://")
	if !slices.Contains(schemes, scheme) {
		return nil, cli.Usagef("%s %q: the scheme must be redis://, rediss:// (TLS), unix:// (a socket's path) or redis-sentinel:// (Sentinels and a master's name)", flag, shown)
	}
	var user, pass string
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		u, p, _ := strings.Cut(rest[:at], ":")
		var err error
		if user, err = unescapeCredential(u); err != nil {
			return nil, cli.Usagef("%s %q: the user name %s%s", flag, shown, err.Error(), encodeHint)
		}
		if pass, err = unescapeCredential(p); err != nil {
			return nil, cli.Usagef("%s %q: the password %s%s", flag, shown, err.Error(), encodeHint)
		}
		rest = rest[at+1:]
	}
	switch scheme {
	case "unix":
		return parseUnix(rest, user, pass, cluster, flag, clusterFlag, shown)
	case "redis-sentinel", "rediss-sentinel":
		return parseSentinel(context.Background(), scheme, rest, user, pass, cluster, flag, clusterFlag, shown)
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	hosts, tail := rest[:end], rest[end:]
	addrs, err := splitHosts(hosts, "6379")
	if err != nil {
		return nil, cli.Usagef("%s %q: %v", flag, shown, err)
	}
	if len(addrs) == 0 {
		return nil, cli.Usagef("%s %q: no host", flag, shown)
	}
	if len(addrs) > 1 && !cluster {
		return nil, cli.Usagef("%s lists %d hosts: pass %s to use them as Cluster seeds, or give one host", flag, len(addrs), clusterFlag)
	}
	opts, tail, files, err := options(scheme, scheme, addrs[0], tail, user, pass, flag, shown)
	if err != nil {
		return nil, err
	}
	if cluster && opts.TLSConfig != nil && files.sni == "" {
		// Each node's certificate is checked against the node's own host
		// (crypto/tls takes it from the address), not the first seed's.
		opts.TLSConfig.ServerName = ""
	}
	if cluster && opts.DB != 0 {
		return nil, cli.Usagef("%s %q: a Redis Cluster has only database 0", flag, shown)
	}
	display := scheme + "://"
	if user != "" {
		display += user + "@"
	}
	display += strings.Join(addrs, ",")
	if opts.DB != 0 {
		display += fmt.Sprintf("/%d", opts.DB)
	}
	path, _, _ := strings.Cut(tail, "?")
	dbSet := strings.Trim(path, "/") != ""
	return &Target{Opts: opts, Addrs: addrs, Cluster: cluster, Display: display, DBSet: dbSet, Flag: flag}, nil
}

// options are the connection options of a URL of scheme (as the user
// wrote it) to addr with tail (its path and query), for go-redis's scheme
// base: go-redis's options, keyguard's TLS files loaded, the credentials
// set. It returns the tail without the TLS files.
func options(scheme, base, addr, tail, user, pass, flag, shown string) (*redis.Options, string, tlsFiles, error) {
	tail, files, err := splitTLSParams(tail)
	if err != nil {
		return nil, "", files, cli.Usagef("%s %q: %v%s", flag, shown, err, tlsHint)
	}
	if files.any() && base != "rediss" {
		return nil, "", files, cli.Usagef("%s %q: cacert, cert, key and sni are TLS options: use %s://%s", flag, shown, strings.Replace(scheme, "redis", "rediss", 1), tlsHint)
	}
	// No credentials in what the parser sees, so none in its error.
	opts, err := redis.ParseURL(base + "://" + addr + tail)
	if err != nil {
		return nil, "", files, cli.Usagef("%s %q: %s%s", flag, shown, human.OneLine(err.Error()), encodeHint)
	}
	if err := files.apply(opts.TLSConfig); err != nil {
		return nil, "", files, cli.Usagef("%s %q: %v%s", flag, shown, err, tlsHint)
	}
	opts.Username, opts.Password = user, pass
	return opts, tail, files, nil
}

// splitHosts splits a URL's comma-separated hosts, each given port unless
// it has one; a host that is not host, host:port, [IPv6] or [IPv6]:port
// with a port from 1 to 65535 is an error that names it.
func splitHosts(hosts, port string) ([]string, error) {
	var addrs []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		host, p, err := net.SplitHostPort(h)
		if err != nil {
			// No port: a name, an IPv4 address, or [IPv6] whole.
			host, p = h, port
			if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
				host = h[1 : len(h)-1]
			}
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("host %q: the port must be a number from 1 to 65535", h)
		}
		if host == "" || strings.ContainsAny(host, "[]") || strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return nil, fmt.Errorf("host %q: write host, host:port, or an IPv6 address in brackets ([::1]:6379)", h)
		}
		addrs = append(addrs, net.JoinHostPort(host, p))
	}
	return addrs, nil
}

// parseUnix reads the rest of unix://[user:password@]/path[?db=N&options]
// (credentials already split off): one server, reached on its Unix
// socket (the server's unixsocket setting).
func parseUnix(rest, user, pass string, cluster bool, flag, clusterFlag, shown string) (*Target, error) {
	if cluster {
		return nil, cli.Usagef("%s %q: a Unix socket reaches one server; %s needs the host:port of Cluster nodes", flag, shown, clusterFlag)
	}
	path, query, _ := strings.Cut(rest, "?")
	if path == "" || path[0] != '/' {
		return nil, cli.Usagef("%s %q: no socket path\n\tTry: unix:///run/redis/redis-server.sock (three slashes: the path is absolute), unix://user:password@/path?db=1", flag, shown)
	}
	opts, err := redis.ParseURL("unix://" + rest)
	if err != nil {
		return nil, cli.Usagef("%s %q: %s%s", flag, shown, human.OneLine(err.Error()), encodeHint)
	}
	opts.Username, opts.Password = user, pass
	display := "unix://"
	if user != "" {
		display += user + "@"
	}
	display += path
	dbSet := false
	if v, err := url.ParseQuery(query); err == nil && v.Has("db") {
		dbSet = true
		display += fmt.Sprintf("?db=%d", opts.DB)
	}
	return &Target{Opts: opts, Addrs: []string{path}, Display: display, DBSet: dbSet, Flag: flag}, nil
}

// tlsHint ends every message about the TLS options of a --redis URL.
const tlsHint = "\n\tTry: rediss://host:port?cacert=ca.pem (a private CA) and cert=client.pem&key=client.key (a server with tls-auth-clients); sni=NAME checks the certificate against NAME"

// encodeHint ends every message about a --redis URL that does not parse.
const encodeHint = "\n\tTry: write redis://user:password@host:port/db; in the user name and password, percent-encode @ as %40, : as %3A, / as %2F, # as %23, % as %25 and a space as %20"

// unescapeCredential decodes a user name or password of a URL. Its error
// says what is wrong without quoting the text: that is the secret.
func unescapeCredential(s string) (string, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return "", errors.New("holds a control character")
		}
	}
	v, err := url.PathUnescape(s)
	if err != nil {
		return "", errors.New("holds a % that does not start an escape such as %40")
	}
	return v, nil
}

// DisplayURL is a --redis URL as messages, reports, logs and help may show
// it: the password replaced with xxxxx. It reads the raw text, not a
// parse of it, so that a URL that does not parse is shown safely too: the
// user name and password are everything before the last '@' (a password
// may hold '/', '?', '#' or '@' unencoded), the password what follows the
// first ':' in them.
func DisplayURL(raw string) string {
	head, rest, ok := strings.Cut(raw, "://")
	if ok {
		head += "://"
	} else {
		head, rest = "", raw
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return raw
	}
	return head + user + ":xxxxx" + rest[at:]
}

// Client returns a go-redis client for the target: a *redis.Client, or a
// *redis.ClusterClient seeded with every host.
func (t *Target) Client() redis.UniversalClient {
	off := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if !t.Cluster {
		o := *t.Opts
		o.MaintNotificationsConfig = off
		return redis.NewClient(&o)
	}
	o := t.Opts
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                    t.Addrs,
		Username:                 o.Username,
		Password:                 o.Password,
		TLSConfig:                o.TLSConfig,
		DialTimeout:              o.DialTimeout,
		ReadTimeout:              o.ReadTimeout,
		WriteTimeout:             o.WriteTimeout,
		MaxRetries:               o.MaxRetries,
		PoolSize:                 o.PoolSize,
		ClientName:               o.ClientName,
		MaintNotificationsConfig: off,
	})
}

// Connect opens a client and checks it with PING, so that a wrong
// URL, a server that is down or refused credentials fail at once with a
// one-line reason.
func Connect(ctx context.Context, t *Target) (redis.UniversalClient, error) {
	c := t.Client()
	// One dial and one reply are enough to tell: without a bound, the
	// client's retries make a wrong port or a TLS mismatch wait ~25 s.
	dial, read := t.Opts.DialTimeout, t.Opts.ReadTimeout
	if dial <= 0 {
		dial = 5 * time.Second
	}
	if read <= 0 {
		read = 3 * time.Second
	}
	// A server still loading its dataset (just started, a replica in a
	// full sync) answers LOADING: it is waited for, as the walks wait.
	deadline := time.Now().Add(loadingWait)
	backoff := 20 * time.Millisecond
	for {
		pctx, cancel := context.WithTimeout(ctx, dial+read)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return c, nil
		}
		if !strings.HasPrefix(err.Error(), "LOADING") || time.Now().After(deadline) {
			c.Close()
			return nil, t.ConnError(err)
		}
		select {
		case <-ctx.Done():
			c.Close()
			return nil, t.ConnError(err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// loadingWait bounds how long Connect waits for a server that is loading
// its dataset.
const loadingWait = 10 * time.Second

// ConnError is Error for a failure on the target's first host. A server
// that hung up is asked why (resp.Farewell): over its maxclients, or in
// protected mode, it says so to a client that waits.
func (t *Target) ConnError(err error) error {
	err = resp.SaidFarewell(err)
	var hu *resp.HungUp
	if resp.HangUp(err) && !errors.As(err, &hu) {
		cfg := resp.Config{Network: t.Opts.Network, DialTimeout: t.Opts.DialTimeout, Dialer: t.Opts.Dialer}
		if t.Opts.Dialer == nil {
			cfg.TLS = t.Opts.TLSConfig
		}
		if said := resp.Farewell(context.Background(), cfg, t.Addrs[0]); said != "" {
			err = &resp.HungUp{Said: said, Err: err}
		}
	}
	return Error(t.Addrs[0], t.Opts.TLSConfig != nil, err, t.Flag)
}

// Error turns a connection or authentication failure into one line
// that says what to check. A TLS client on a plain port usually waits for
// a handshake answer that never comes (or reads a plain error reply), and
// a plain client on a TLS port is hung up on: both look like a network
// problem. When the failure has one of those shapes, the port is asked
// once, with a plain PING and with a TLS handshake, what it speaks.
func Error(addr string, useTLS bool, err error, flag string) error {
	if line := httpStatus(err.Error()); line != "" {
		return fmt.Errorf("%s answers HTTP (%s), not the Redis protocol: a web server or proxy listens there; point %s at the Redis server's host and port", addr, line, flag)
	}
	if msg := tlsMismatch(addr, useTLS, err, flag); msg != "" {
		return errors.New(msg)
	}
	msg := err.Error()
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot connect to %s: connection refused (is the server running, and is %s right?)", addr, flag)
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "invalid password"), strings.Contains(msg, "invalid username-password"),
		strings.Contains(msg, "without any password configured"):
		return AuthError(addr, msg, flag)
	case strings.Contains(msg, "NOAUTH"):
		return fmt.Errorf("%s requires a password: put it in %s (%s)", addr, flag, CredentialsHint)
	case strings.HasPrefix(msg, "NOPERM"):
		return fmt.Errorf("%s: the ACL user may not run a command this one needs (%s); grant it (docs/audit-acl.md gives the rules of audit, hotkeys, investigate and writers)", addr, human.OneLine(msg))
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("cannot connect to %s: no answer in time (%s): check the host, port and firewall", addr, human.OneLine(msg))
	case strings.Contains(msg, "DB index is out of range"):
		return fmt.Errorf("%s has no such database (%s): it has as many as its databases setting says, 16 (0 to 15) unless changed; check --db or the /N of %s", addr, human.OneLine(msg), flag)
	case strings.HasPrefix(msg, "LOADING"):
		return fmt.Errorf("%s is loading its dataset (%s): run again once it has loaded", addr, human.OneLine(msg))
	case strings.Contains(msg, "tls:"), strings.Contains(msg, "x509:"), strings.Contains(msg, "TLS handshake"):
		return fmt.Errorf("TLS with %s failed (%s): %s", addr, human.OneLine(msg), tlsAdvice(err, flag))
	}
	return fmt.Errorf("cannot connect to %s: %s", addr, human.OneLine(msg))
}

// httpStatus returns the HTTP status line a connection error quotes (the
// server answered the first command as a web server or proxy does, with
// "HTTP/1.1 400 Bad Request"), or "".
func httpStatus(msg string) string {
	i := strings.Index(msg, "HTTP/")
	if i < 0 || i+6 >= len(msg) || (msg[i+5] != '1' && msg[i+5] != '2') {
		return ""
	}
	line := msg[i:]
	if j := strings.IndexAny(line, "\"\r\n"); j >= 0 {
		line = line[:j]
	}
	return human.OneLine(line)
}

// AuthError is a server's refusal of the credentials (msg, its reply) in
// one line that says what to change in the URL of flag.
func AuthError(addr, msg, flag string) error {
	if strings.Contains(msg, "without any password configured") {
		return fmt.Errorf("%s asks no password of its default user, yet %s gives one: leave the password out of the URL (or name the ACL user it is for: %s)", addr, flag, CredentialsHint)
	}
	return fmt.Errorf("%s refused the credentials (%s): check the user and password in %s (%s)", addr, human.OneLine(msg), flag, CredentialsHint)
}

// CredentialsHint says where a URL holds its credentials, whatever its
// form (redis://, rediss://, unix://, redis-sentinel://).
const CredentialsHint = "user:password@ before the host, or before the path of unix://"

// tlsMismatch names a TLS client on a plain port or a plain client on a
// TLS port, or returns "".
func tlsMismatch(addr string, useTLS bool, err error, flag string) string {
	var rh tls.RecordHeaderError
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "" // nothing answered at all
	}
	msg := err.Error()
	timeout := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
	hungUp := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "can't parse") || strings.Contains(msg, "invalid reply")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	switch {
	case useTLS && (errors.As(err, &rh) || strings.Contains(msg, "does not look like a TLS handshake") || timeout):
		if speaksRESP(ctx, addr) {
			return fmt.Sprintf("%s answers plain Redis, not TLS: use redis:// instead of rediss:// (or point rediss:// at the server's tls-port)", addr)
		}
	case !useTLS && hungUp:
		if speaksTLS(ctx, addr) {
			return fmt.Sprintf("%s expects TLS and hung up on a plain connection: use rediss:// instead of redis:// (add ?skip_verify=true only to test with a self-signed certificate)", addr)
		}
	case useTLS && hungUp:
		// Over TLS 1.3 a server checks the client's certificate after the
		// handshake; the client may see the connection reset before the
		// alert that says why.
		if alert := tlsAlert(ctx, addr); alert != "" {
			return fmt.Sprintf("TLS with %s failed (%s): %s", addr, alert, tlsAdvice(errors.New(alert), flag))
		}
	}
	return ""
}

// tlsAlert is the TLS alert addr sends a client that shows no certificate
// (remote error: tls: certificate required), or "": the handshake is not
// checked, and nothing is sent after it: the alert is read as it comes (a
// write could meet the connection reset and lose it).
func tlsAlert(ctx context.Context, addr string) string {
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a probe: it sends nothing
	c, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(time.Second)) // a server that wants no certificate sends nothing
		var b [1]byte
		_, err = c.Read(b[:])
	}
	if err != nil && strings.Contains(err.Error(), "remote error: tls") {
		return human.OneLine(err.Error())
	}
	return ""
}

// speaksRESP reports whether addr answers a plain inline PING with a RESP
// reply (+PONG, or an error such as -NOAUTH).
func speaksRESP(ctx context.Context, addr string) bool {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return false
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return false
	}
	return b[0] == '+' || b[0] == '-'
}

// speaksTLS reports whether addr takes part in a TLS handshake: it
// completes, or the server answers with a TLS alert (it may want a client
// certificate). The certificate is not checked: nothing is sent over the
// connection, it only tells a TLS port from a plain one.
func speaksTLS(ctx context.Context, addr string) bool {
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a probe: no data is sent
	c, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		c.Close()
		return true
	}
	var alert tls.AlertError
	return errors.As(err, &alert) || strings.Contains(err.Error(), "remote error: tls")
}

// ClusterTrouble explains a failed command on a Cluster by asking the
// nodes themselves: the masters that do not answer or that the cluster
// marks failed, and whether key's slot is on one of them. It returns ""
// when every master answers, so the caller keeps its own message.
func ClusterTrouble(ctx context.Context, t *Target, key string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var nodes []topology.Node
	var unreachable []string
	slot := int64(-1)
	for _, addr := range t.Addrs {
		c := t.NodeClient(addr)
		out, err := c.ClusterNodes(ctx).Result()
		if err == nil {
			nodes = topology.Parse(out, "")
			slot, _ = c.ClusterKeySlot(ctx, key).Result()
		}
		c.Close()
		if err == nil {
			break
		}
		unreachable = append(unreachable, fmt.Sprintf("%s (%s)", addr, human.OneLine(err.Error())))
	}
	if nodes == nil {
		return fmt.Sprintf("no Redis Cluster node of %s answers: %s; check that the cluster runs and that %s lists its nodes", t.Flag, strings.Join(unreachable, ", "), t.Flag)
	}
	var down []string
	recordsDown := ""
	for _, n := range nodes {
		if !n.IsMaster() || len(n.Owned) == 0 { // a failed master whose replica took over serves nothing
			continue
		}
		why := ""
		c := t.NodeClient(n.Addr)
		if err := c.Ping(ctx).Err(); err != nil {
			why = "does not answer: " + human.OneLine(err.Error())
		}
		c.Close()
		if why == "" && n.Failed() {
			why = "is marked failed by the cluster"
		}
		if why == "" {
			continue
		}
		d := fmt.Sprintf("master %s (slots %s) is down: it %s", n.Addr, n.SlotText(), why)
		down = append(down, d)
		if slot >= 0 && n.Serves(int(slot)) {
			recordsDown = n.Addr
		}
	}
	if len(down) == 0 {
		return ""
	}
	msg := "Redis Cluster " + strings.Join(down, "; ")
	if recordsDown != "" {
		msg += fmt.Sprintf("; %s lives in slot %d, on that node", key, slot)
	}
	return msg + ": bring the node back, or promote its replica (CLUSTER FAILOVER FORCE on the replica), then run this again"
}

// NodeClient is a plain client for one node of the target, failing fast.
func (t *Target) NodeClient(addr string) *redis.Client {
	o := *t.Opts
	o.Addr = addr
	o.DB = 0
	o.DialTimeout = time.Second
	o.ReadTimeout = time.Second
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.PoolSize = 1
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClient(&o)
}
