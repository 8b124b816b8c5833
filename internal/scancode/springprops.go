package scancode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/keyguard/keyguard/internal/keyshape"
)

// springProps are the properties of a Spring project's configuration
// files (application*.yml, .yaml and .properties, and bootstrap*): every
// value each key is given, over all files and profile documents. A field
// annotated @Value("${redis.key.admin}") holds what they give it, so a
// key built from such fields is the configured text, not a placeholder.
type springProps struct {
	vals map[string][]string
	// unread: a configuration file could not be read or parsed (a Maven
	// token such as @project.version@ is not YAML): any key may be set
	// there, so no value is known and the fields keep their placeholders.
	unread bool
	// relaxed is vals by relaxedKey, made at the first lookup that
	// needs it.
	relaxed map[string][]string
}

// springConfig is a project's Spring configuration, by module: a
// repository of several Spring Boot applications (admin/, portal/, each
// with its src/main/resources/application.yml) gives each its own.
type springConfig struct {
	byModule map[string]*springProps
	// all is every module's together: the properties of a Java file
	// whose module has no configuration file (a library module), known
	// where every module agrees.
	all *springProps
}

// loadSpringConfig reads the configuration files.
func loadSpringConfig(paths []string, maxBytes int64) *springConfig {
	c := &springConfig{byModule: map[string]*springProps{}, all: newSpringProps()}
	for _, path := range paths {
		m := moduleOf(path)
		p := c.byModule[m]
		if p == nil {
			p = newSpringProps()
			c.byModule[m] = p
		}
		fi, err := os.Stat(path)
		if err == nil && fi.Size() > maxBytes {
			err = errors.New("too large")
		}
		var data []byte
		if err == nil {
			data, err = os.ReadFile(path)
		}
		if err == nil {
			if err = p.add(path, data); err == nil {
				err = c.all.add(path, data)
			}
		}
		if err != nil {
			p.unread, c.all.unread = true, true
		}
	}
	return c
}

// of is the properties a Java file at path sees: its module's, else all.
func (c *springConfig) of(path string) *springProps {
	if c == nil {
		return nil
	}
	if p := c.byModule[moduleOf(path)]; p != nil {
		return p
	}
	return c.all
}

// moduleOf is the module a file belongs to: the directory that holds its
// src/main/ (Maven and Gradle's layout), or its own directory.
func moduleOf(path string) string {
	p := filepath.ToSlash(path)
	if i := strings.LastIndex(p, "/src/main/"); i >= 0 {
		return p[:i]
	}
	if strings.HasPrefix(p, "src/main/") {
		return "."
	}
	return filepath.ToSlash(filepath.Dir(path))
}

func newSpringProps() *springProps { return &springProps{vals: map[string][]string{}} }

// springConfigFile reports whether a file's base name is one Spring Boot
// reads its properties from.
func springConfigFile(base string) bool {
	ext := filepath.Ext(base)
	if ext != ".yml" && ext != ".yaml" && ext != ".properties" {
		return false
	}
	name := strings.TrimSuffix(base, ext)
	for _, p := range []string{"application", "bootstrap"} {
		if name == p || strings.HasPrefix(name, p+"-") {
			return true
		}
	}
	return false
}

// add reads one configuration file; an error makes its properties
// unknown (see unread).
func (p *springProps) add(path string, data []byte) error {
	if filepath.Ext(path) == ".properties" {
		p.addProperties(data)
		return nil
	}
	return p.addYAML(data)
}

func (p *springProps) set(key, value string) {
	if !slices.Contains(p.vals[key], value) {
		p.vals[key] = append(p.vals[key], value)
	}
}

// addYAML flattens every document of a YAML file to dotted keys
// (redis.key.admin; a list's items as name[0]).
func (p *springProps) addYAML(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		budget := maxFileProps
		if !p.flatten("", doc, &budget) {
			return errTooManyProps
		}
	}
}

// maxFileProps bounds the properties one YAML file flattens to: aliases
// of aliases (&a [*b, *b…]) share their values in the decoded document
// but repeat them here, exponentially (a file of seven lines made 4.8
// million).
const maxFileProps = 100_000

var errTooManyProps = errors.New("more properties than a configuration holds (aliases of aliases?)")

// flatten adds v's scalars under dotted keys; false when budget ran out.
func (p *springProps) flatten(prefix string, v any, budget *int) bool {
	if *budget--; *budget < 0 {
		return false
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !p.flatten(join(k), x, budget) {
				return false
			}
		}
	case map[any]any:
		for k, x := range v {
			if !p.flatten(join(fmt.Sprint(k)), x, budget) {
				return false
			}
		}
	case []any:
		for i, x := range v {
			if !p.flatten(prefix+"["+strconv.Itoa(i)+"]", x, budget) {
				return false
			}
		}
	case nil:
		if prefix != "" {
			p.set(prefix, "")
		}
	case string:
		p.set(prefix, v)
	case float64:
		p.set(prefix, strconv.FormatFloat(v, 'f', -1, 64))
	default:
		p.set(prefix, fmt.Sprint(v))
	}
	return true
}

// addProperties reads a .properties file: key=value, key: value or
// key value, # and ! comments, a backslash continuing a line, and the
// escapes \t \n \r \f \uXXXX.
func (p *springProps) addProperties(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	var logical strings.Builder
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if logical.Len() == 0 && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		// An odd number of backslashes at the end continues the line.
		trail := len(line) - len(strings.TrimRight(line, `\`))
		if trail%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		p.property(logical.String())
		logical.Reset()
	}
	if logical.Len() > 0 {
		p.property(logical.String())
	}
}

func (p *springProps) property(line string) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	key := unescapeProp(line[:min(i, len(line))])
	rest := strings.TrimLeft(line[min(i, len(line)):], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	if key != "" {
		p.set(key, unescapeProp(rest))
	}
}

func unescapeProp(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// value is the text an @Value annotation's text ("${redis.key.admin}",
// "${a:default}", "cache:${a}:x") holds: each ${…} replaced by the one
// value the configuration gives that key (a value with ${…} of its own
// resolved in turn), or by its default where no file sets the key. It
// reports false where the text cannot be known: a configuration file not
// read, a key set to different
// values (profiles that disagree), a key set nowhere without a default,
// a SpEL expression (#{…}), or placeholders nested too deep.
func (p *springProps) value(text string, depth int) (string, bool) {
	budget := maxSubstitutions
	return p.resolve(text, depth, &budget)
}

// maxSubstitutions bounds the ${…} one @Value resolves, and maxValueBytes
// its text: properties that refer to each other several times over would
// otherwise grow without end (scan-code runs on code it does not trust).
const (
	maxSubstitutions = 256
	maxValueBytes    = 4096
)

func (p *springProps) resolve(text string, depth int, budget *int) (string, bool) {
	if p == nil || p.unread || depth > 8 || strings.Contains(text, "#{") {
		return "", false
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			b.WriteString(text)
			return b.String(), true
		}
		b.WriteString(text[:i])
		end := closingBrace(text, i+2)
		if end < 0 {
			return "", false
		}
		inner := text[i+2 : end]
		key, def, hasDef := inner, "", false
		if j := strings.IndexByte(inner, ':'); j >= 0 && !strings.Contains(inner[:j], "${") {
			key, def, hasDef = inner[:j], inner[j+1:], true
		}
		var v string
		switch vs := p.lookup(key); {
		case len(vs) == 1:
			v = vs[0]
		case len(vs) == 0 && hasDef:
			v = def
		default:
			return "", false
		}
		if *budget--; *budget < 0 {
			return "", false
		}
		r, ok := p.resolve(v, depth+1, budget)
		if !ok || b.Len()+len(r) > maxValueBytes {
			return "", false
		}
		b.WriteString(r)
		text = text[end+1:]
	}
}

// closingBrace is the index of the } that closes a ${ whose text starts
// at from, counting nested ${…}; -1 when there is none.
func closingBrace(s string, from int) int {
	open := 1
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == '{' && i > 0 && s[i-1] == '$':
			open++
		case s[i] == '}':
			open--
			if open == 0 {
				return i
			}
		}
	}
	return -1
}

// cachePrefix is the prefix Spring Boot gives every cache's keys from the
// configuration (when the code defines no RedisCacheConfiguration of its
// own): spring.cache.redis.key-prefix before the cache's name and ::,
// none at all under use-key-prefix: false; nil when neither is set, or
// their values are not known.
func (p *springProps) cachePrefix() prefixFunc {
	if p == nil {
		return nil
	}
	const base = "spring.cache.redis."
	if _, set := p.vals[base+"use-key-prefix"]; set {
		use, ok := p.value("${"+base+"use-key-prefix}", 0)
		if !ok {
			return nil
		}
		if strings.EqualFold(use, "false") {
			return func(keyshape.Shape) keyshape.Shape { return keyshape.Lit("") }
		}
	}
	if _, set := p.vals[base+"key-prefix"]; !set {
		return nil
	}
	prefix, ok := p.value("${"+base+"key-prefix}", 0)
	if !ok {
		return nil
	}
	return func(name keyshape.Shape) keyshape.Shape {
		return keyshape.Concat(keyshape.Lit(prefix), name, keyshape.Lit("::"))
	}
}

// lookup is the values of a key, written as the configuration writes it
// or, where none is, in Spring's relaxed form: jwt.onlineKey,
// jwt.online-key and jwt.online_key are one property.
func (p *springProps) lookup(key string) []string {
	if vs, ok := p.vals[key]; ok {
		return vs
	}
	if p.relaxed == nil {
		p.relaxed = map[string][]string{}
		for k, vs := range p.vals {
			c := relaxedKey(k)
			for _, v := range vs {
				if !slices.Contains(p.relaxed[c], v) {
					p.relaxed[c] = append(p.relaxed[c], v)
				}
			}
		}
	}
	return p.relaxed[relaxedKey(key)]
}

// relaxedKey is a property's name in lower case without - and _.
func relaxedKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '_':
			return -1
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, k)
}
