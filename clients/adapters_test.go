package clients

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJavaAdapters compiles each Java adapter against its library where
// the library's jars are present (KEYGUARD_JAVA_CLASSPATH, or Debian's
// /usr/share/java), and skips it, saying which library is missing,
// otherwise. The adapters are never compiled against stand-ins.
func TestJavaAdapters(t *testing.T) {
	classes := javaClasses(t)
	var jars []string
	for _, p := range filepath.SplitList(os.Getenv("KEYGUARD_JAVA_CLASSPATH")) {
		if p != "" {
			jars = append(jars, p)
		}
	}
	debian, _ := filepath.Glob("/usr/share/java/*.jar")
	jars = append(jars, debian...)
	for _, a := range []struct{ dir, probe, lib string }{
		{"jedis", "redis/clients/jedis/UnifiedJedis.class", "Jedis 4+"},
		{"lettuce", "io/lettuce/core/api/sync/BaseRedisCommands.class", "Lettuce 6"},
		{"spring", "org/springframework/data/redis/core/RedisTemplate.class", "Spring Data Redis"},
	} {
		t.Run(a.dir, func(t *testing.T) {
			if !anyJarHolds(jars, a.probe) {
				t.Skipf("%s is not installed here: no jar on KEYGUARD_JAVA_CLASSPATH or in /usr/share/java holds %s; "+
					"the %s adapter is compiled only where its library is", a.lib, a.probe, a.dir)
			}
			srcs, _ := filepath.Glob(filepath.Join("java", "src", "main", "java", "io", "keyguard", "runtime", a.dir, "*.java"))
			cp := strings.Join(append([]string{classes}, jars...), string(os.PathListSeparator))
			args := append([]string{"--release", "11", "-Xlint:all", "-cp", cp, "-d", t.TempDir()}, srcs...)
			if out, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
				t.Errorf("javac %s adapter: %v\n%s", a.dir, err, out)
			}
		})
	}
}

func anyJarHolds(jars []string, class string) bool {
	for _, j := range jars {
		if ok, err := jarHolds(j, class); err == nil && ok {
			return true
		}
	}
	return false
}

func jarHolds(jar, class string) (bool, error) {
	st, err := os.Stat(jar)
	if err != nil {
		return false, err
	}
	if st.IsDir() {
		_, err := os.Stat(filepath.Join(jar, filepath.FromSlash(class)))
		return err == nil, nil
	}
	z, err := zip.OpenReader(jar)
	if err != nil {
		return false, fmt.Errorf("%s: %w", jar, err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name == class {
			return true, nil
		}
	}
	return false, nil
}
