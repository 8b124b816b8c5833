package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
)

// sentinelPort is where a Sentinel listens unless the URL says otherwise.
const sentinelPort = "26379"

// parseSentinel reads the rest of
// redis-sentinel://[user:password@]host[:port][,host[:port]…][/db][?options]#MASTER
// (rediss-sentinel:// for TLS; credentials already split off), the form
// Lettuce and others give a Sentinel-managed server, and asks the
// Sentinels, in turn, where the master named MASTER is now. The target is
// that master; the credentials and options are the master's (a Sentinel is
// asked without credentials first, with them if it wants them).
func parseSentinel(ctx context.Context, scheme, rest, user, pass string, cluster bool, flag, clusterFlag, shown string) (*Target, error) {
	if cluster {
		return nil, cli.Usagef("%s %q: Sentinels name one master; %s needs the host:port of Cluster nodes", flag, shown, clusterFlag)
	}
	rest, frag, _ := strings.Cut(rest, "#")
	name, err := url.PathUnescape(frag)
	if err != nil || name == "" {
		return nil, cli.Usagef("%s %q: no master name: end the URL with #NAME, the name of the Sentinels' \"sentinel monitor NAME …\"%s", flag, shown, sentinelHint)
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	hosts, tail := rest[:end], rest[end:]
	addrs, err := splitHosts(hosts, sentinelPort)
	if err != nil {
		return nil, cli.Usagef("%s %q: %v%s", flag, shown, err, sentinelHint)
	}
	if len(addrs) == 0 {
		return nil, cli.Usagef("%s %q: no Sentinel host%s", flag, shown, sentinelHint)
	}
	opts, tail, files, err := options(scheme, strings.TrimSuffix(scheme, "-sentinel"), addrs[0], tail, user, pass, flag, shown)
	if err != nil {
		return nil, err
	}
	sm := &SentinelMaster{Name: name, Sentinels: addrs, sni: files.sni != ""}
	master, err := sm.ask(ctx, opts, flag)
	var down *SentinelsDownError
	if err != nil && !errors.As(err, &down) {
		return nil, err
	}
	opts.Addr = master
	if master != "" && opts.TLSConfig != nil && files.sni == "" {
		opts.TLSConfig.ServerName, _, _ = net.SplitHostPort(master)
	}
	display := scheme + "://"
	if user != "" {
		display += user + "@"
	}
	display += strings.Join(addrs, ",")
	if opts.DB != 0 {
		display += fmt.Sprintf("/%d", opts.DB)
	}
	display += "#" + name
	path, _, _ := strings.Cut(tail, "?")
	t := &Target{Opts: opts, Addrs: []string{master}, Display: display, DBSet: strings.Trim(path, "/") != "", Flag: flag,
		Sentinel: sm}
	if down != nil { // the master's address "" until MasterNow
		down.Target = t
		return nil, down
	}
	return t, nil
}

// SentinelsDownError is a redis-sentinel:// URL none of whose Sentinels
// answers now. The URL itself is good: Target is it, its master not yet
// known, for a command that runs long (keyguard serve) to start all the
// same and ask again (MasterNow) before each use.
type SentinelsDownError struct {
	msg    string
	Target *Target
}

func (e *SentinelsDownError) Error() string { return e.msg }

// SentinelMaster is where a redis-sentinel:// URL's target came from.
type SentinelMaster struct {
	Name      string   // the master's name
	Sentinels []string // the Sentinels of the URL
	sni       bool     // the URL names the TLS server name
	auth      bool     // the Sentinels want the URL's credentials too
}

// MasterNow asks the Sentinels again where the master is (after a
// failover, another server), and points t at it: for a command that runs
// long and connects again and again (keyguard serve's audits). A target
// of no Sentinel is left as it is.
func (t *Target) MasterNow(ctx context.Context) error {
	s := t.Sentinel
	if s == nil {
		return nil
	}
	addr, err := s.ask(ctx, t.Opts, t.Flag)
	if err != nil {
		return err
	}
	t.Opts.Addr, t.Addrs = addr, []string{addr}
	if t.Opts.TLSConfig != nil && !s.sni {
		// A new config: clients made before keep theirs.
		t.Opts.TLSConfig = t.Opts.TLSConfig.Clone()
		t.Opts.TLSConfig.ServerName, _, _ = net.SplitHostPort(addr)
	}
	return nil
}

// MasterAddr asks the Sentinels where the master is now, without moving
// t; "" for a target of no Sentinel.
func (t *Target) MasterAddr(ctx context.Context) (string, error) {
	if t.Sentinel == nil {
		return "", nil
	}
	return t.Sentinel.ask(ctx, t.Opts, t.Flag)
}

// FollowingClient is Client, but for a Sentinel URL one that follows the
// master through failovers (go-redis's failover client): for a command
// that runs long and reads with go-redis alone. Walkers of keyguard's own
// take Client's, whose address is the master's.
func (t *Target) FollowingClient() redis.UniversalClient {
	s := t.Sentinel
	if s == nil {
		return t.Client()
	}
	o := t.Opts
	fo := &redis.FailoverOptions{MasterName: s.Name, SentinelAddrs: s.Sentinels, Username: o.Username, Password: o.Password,
		DB: o.DB, TLSConfig: o.TLSConfig, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout}
	if s.auth {
		fo.SentinelUsername, fo.SentinelPassword = o.Username, o.Password
	}
	return redis.NewFailoverClient(fo)
}

// sentinelHint ends every message about a redis-sentinel:// URL.
const sentinelHint = "\n\tTry: redis-sentinel://user:password@sentinel1:26379,sentinel2:26379/0#mymaster (the user and password are the master's; rediss-sentinel:// for TLS)"

// ask asks each Sentinel in turn for the address of the master, and
// returns the first answer. o carries the master's credentials and TLS; a
// Sentinel is asked without credentials first (and remembered as wanting
// them when it does).
func (s *SentinelMaster) ask(ctx context.Context, o *redis.Options, flag string) (string, error) {
	dial := o.DialTimeout
	if dial <= 0 {
		dial = 3 * time.Second
	}
	name := s.Name
	var failed []string
	replied := false // a server answered with an error: not a Sentinel, or a refusal
	for _, addr := range s.Sentinels {
		got, err := askSentinel(ctx, o, s.sni, addr, name, dial, s.auth)
		if err != nil && !s.auth && o.Password != "" && needsAuth(err) {
			if got, err = askSentinel(ctx, o, s.sni, addr, name, dial, true); err == nil {
				s.auth = true
			}
		}
		switch {
		case err == nil && got != "":
			return got, nil
		case err == nil:
			return "", fmt.Errorf("Sentinel %s monitors no master named %q%s: check the name after # in %s", addr, name, monitored(ctx, o, s.sni, addr, dial), flag)
		case needsAuth(err) && o.Password == "":
			return "", fmt.Errorf("Sentinel %s requires a password: put it in %s (redis-sentinel://user:password@%s#%s; the same credentials log in to the master)", addr, flag, addr, name)
		}
		var re redis.Error
		replied = replied || errors.As(err, &re)
		failed = append(failed, fmt.Sprintf("%s (%s)", addr, human.OneLine(err.Error())))
	}
	if replied {
		return "", fmt.Errorf("no Sentinel of %s gives the master: %s; check that the hosts and ports are Sentinels' (a Sentinel listens on %s unless its port says otherwise)", flag, strings.Join(failed, ", "), sentinelPort)
	}
	return "", &SentinelsDownError{msg: fmt.Sprintf("no Sentinel of %s answers: %s; check the hosts and ports (a Sentinel listens on %s unless its port says otherwise)", flag, strings.Join(failed, ", "), sentinelPort)}
}

// askSentinel asks one Sentinel for master name's address: "" and no
// error when it monitors no such master.
func askSentinel(ctx context.Context, o *redis.Options, sni bool, addr, name string, dial time.Duration, auth bool) (string, error) {
	c := sentinelClient(o, sni, addr, dial, auth)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*dial)
	defer cancel()
	hp, err := c.GetMasterAddrByName(ctx, name).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", nil
	case err != nil:
		return "", err
	case len(hp) != 2:
		return "", fmt.Errorf("SENTINEL GET-MASTER-ADDR-BY-NAME answered %q", hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// monitored lists the masters addr monitors, for a name it does not know:
// ", it monitors a, b", or "".
func monitored(ctx context.Context, o *redis.Options, sni bool, addr string, dial time.Duration) string {
	for _, auth := range []bool{false, true} {
		c := sentinelClient(o, sni, addr, dial, auth)
		cctx, cancel := context.WithTimeout(ctx, 2*dial)
		ms, err := c.Masters(cctx).Result()
		cancel()
		c.Close()
		if err != nil {
			continue
		}
		var names []string
		for _, m := range ms {
			if kv, ok := m.([]any); ok {
				for i := 0; i+1 < len(kv); i += 2 {
					if kv[i] == "name" {
						names = append(names, fmt.Sprint(kv[i+1]))
					}
				}
			}
			if mm, ok := m.(map[any]any); ok {
				names = append(names, fmt.Sprint(mm["name"]))
			}
		}
		slices.Sort(names)
		if len(names) == 0 {
			return ", it monitors none"
		}
		return ", it monitors " + strings.Join(names, ", ")
	}
	return ""
}

func sentinelClient(o *redis.Options, sni bool, addr string, dial time.Duration, auth bool) *redis.SentinelClient {
	so := &redis.Options{Addr: addr, DialTimeout: dial, ReadTimeout: dial, MaxRetries: -1, Protocol: 2, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}
	if o.TLSConfig != nil {
		so.TLSConfig = o.TLSConfig.Clone()
		if !sni {
			so.TLSConfig.ServerName, _, _ = net.SplitHostPort(addr)
		}
	}
	if auth {
		so.Username, so.Password = o.Username, o.Password
	}
	return redis.NewSentinelClient(so)
}

// needsAuth reports a Sentinel that wants credentials.
func needsAuth(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "WRONGPASS")
}
