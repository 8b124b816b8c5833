package scancode

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSpringProps(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yml := write("application.yml", "app:\n  name: shop\n  hosts: [a, b]\n  ratio: 1.5\n  on: true\n  empty:\nprefix: ${app.name}:${app.env:dev}\nloop: ${loop}\n---\napp:\n  name: shop\n")
	props := write("application-x.properties", "bomb=${b1}${b1}${b1}${b1}\nb1=${b2}${b2}${b2}${b2}\nb2=${b3}${b3}${b3}${b3}\nb3=${b4}${b4}${b4}${b4}\nb4=${b5}${b5}${b5}${b5}\nb5=${b6}${b6}${b6}${b6}\nb6=0123456789\n# comment\n! another\nk1=v1\nk2 : v2\nk3 v3\nk4=a\\\n    b\nk5=\\u0041\\:x\nk\\=6=v6\nregion=cn\n")
	other := write("application-y.properties", "region=us\n")
	p := loadSpringConfig([]string{yml, props, other}, 1<<20).all
	for text, want := range map[string]string{
		"${app.name}":            "shop",
		"${app.hosts[1]}":        "b",
		"${app.ratio}":           "1.5",
		"${app.on}":              "true",
		"${app.empty}":           "",
		"${prefix}":              "shop:dev",
		"x-${k1}-${k2}-${k3}":    "x-v1-v2-v3",
		"${k4}":                  "ab",
		"${k5}":                  "A:x",
		"${k=6}":                 "v6",
		"${nothing:${app.name}}": "shop",
		"plain":                  "plain",
	} {
		if got, ok := p.value(text, 0); !ok || got != want {
			t.Errorf("value(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	for _, text := range []string{"${region}", "${nothing}", "${loop}", "#{'${k1}'}", "${unclosed", "${bomb}"} {
		if got, ok := p.value(text, 0); ok {
			t.Errorf("value(%q) = %q: want it unknown", text, got)
		}
	}
	broken := write("application-z.yml", "version: @project.version@\n")
	q := loadSpringConfig([]string{yml, broken}, 1<<20).all
	if got, ok := q.value("${app.name}", 0); ok {
		t.Errorf("with a file not read, value = %q: want unknown (the file may set it)", got)
	}
	// Aliases of aliases: seven lines that flatten to 4.8 million
	// properties are a file not read.
	bomb := write("application-bomb.yml", "a: &a [l, l, l, l, l, l, l, l, l]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n")
	if b := loadSpringConfig([]string{yml, bomb}, 1<<20).all; !b.unread || len(b.vals) > 2*maxFileProps {
		t.Errorf("aliases of aliases: unread %v, %d properties", b.unread, len(b.vals))
	}
	if got, ok := loadSpringConfig([]string{yml}, 10).all.value("${app.name}", 0); ok {
		t.Errorf("a file over the size limit was read: %q", got)
	}
}

// Each module of a repository of several applications sees its own
// configuration; a module without one sees what all modules agree on.
func TestSpringConfigModules(t *testing.T) {
	dir := t.TempDir()
	for path, text := range map[string]string{
		"admin/src/main/resources/application.yml":         "redis:\n  prefix: adm\n  db: mall\n",
		"portal/src/main/resources/application.properties": "redis.prefix=portal\nredis.db=mall\n",
	} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := loadSpringConfig([]string{filepath.Join(dir, "admin/src/main/resources/application.yml"), filepath.Join(dir, "portal/src/main/resources/application.properties")}, 1<<20)
	for file, want := range map[string]string{
		"admin/src/main/java/x/A.java":  "adm:mall",
		"portal/src/main/java/x/P.java": "portal:mall",
		"common/src/main/java/x/C.java": "",
	} {
		got, ok := c.of(filepath.Join(dir, file)).value("${redis.prefix}:${redis.db}", 0)
		if want == "" && ok || want != "" && got != want {
			t.Errorf("%s: %q %v, want %q", file, got, ok, want)
		}
	}
	if got, ok := c.of(filepath.Join(dir, "common/src/main/java/x/C.java")).value("${redis.db}", 0); !ok || got != "mall" {
		t.Errorf("a library module: %q %v, want the value every module gives", got, ok)
	}
}

func TestSpringConfigFile(t *testing.T) {
	for name, want := range map[string]bool{"application.yml": true, "application-prod.yaml": true, "bootstrap.properties": true,
		"application.json": false, "applications.yml": false, "logback.xml": false, "my-application.yml": false} {
		if springConfigFile(name) != want {
			t.Errorf("%s: %v", name, !want)
		}
	}
}

func FuzzSpringProps(f *testing.F) {
	f.Add([]byte("a=b\nc: ${a}\\\n d\n"), "${c:${a}}")
	f.Add([]byte("x=${y}\ny=${x}\n"), "${x}")
	f.Add([]byte("a=${b}${b}${b}${b}\nb=${c}${c}${c}${c}\nc=${d}${d}${d}${d}\nd=${e}${e}${e}${e}\ne=${f}${f}${f}${f}\nf=${g}${g}${g}${g}\ng=${h}${h}${h}${h}\nh=${i}${i}${i}${i}\ni=x\n"), "${a}")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		p := newSpringProps()
		p.addProperties(data)
		_ = p.addYAML(data)
		p.value(text, 0)
	})
}
