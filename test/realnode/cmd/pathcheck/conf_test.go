package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckConfApache: LoadFile and LoadModule paths are checked, relative ones against
// ServerRoot, and an Include is followed; a module that is not there is reported missing (the
// positive control).
func TestCheckConfApache(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	writeFile(t, filepath.Join(dir, "modules", "mod_mpm_event.so"), "")
	writeFile(t, filepath.Join(dir, "agent", "lib", "libsdk.so"), "")
	writeFile(t, filepath.Join(conf, "httpd.conf"), `ServerRoot "`+dir+`"
# LoadModule commented_module /nowhere.so
LoadModule mpm_event_module modules/mod_mpm_event.so
Include `+conf+`/agent.conf
`)
	writeFile(t, filepath.Join(conf, "agent.conf"), `LoadFile `+dir+`/agent/lib/libsdk.so
LoadModule otel_apache_module `+dir+`/agent/libmod_apache_otel.so
ApacheModuleEnabled ON
`)
	httpd, agent := filepath.Join(conf, "httpd.conf"), filepath.Join(conf, "agent.conf")
	got := checkConf(httpd, os.Stat)
	want := []string{
		"conf " + httpd + `: ServerRoot "` + dir + `"`,
		"conf " + httpd + ": LoadModule mpm_event_module modules/mod_mpm_event.so",
		"path conf:" + httpd + " " + dir + "/modules/mod_mpm_event.so ok file",
		"conf " + httpd + ": Include " + agent,
		"path conf:" + httpd + " " + agent + " ok file",
		"conf " + agent + ": LoadFile " + dir + "/agent/lib/libsdk.so",
		"path conf:" + agent + " " + dir + "/agent/lib/libsdk.so ok file",
		"conf " + agent + ": LoadModule otel_apache_module " + dir + "/agent/libmod_apache_otel.so",
		"path conf:" + agent + " " + dir + "/agent/libmod_apache_otel.so missing",
		"conf " + agent + ": ApacheModuleEnabled ON",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkConf:\n%q\nwant\n%q", got, want)
	}
}

// TestCheckConfNginx: load_module is checked, an include pattern is followed into every file it
// matches, relative includes resolve against the configuration's folder, and a pattern that
// matches nothing is reported missing.
func TestCheckConfNginx(t *testing.T) {
	dir := t.TempDir()
	nginx := filepath.Join(dir, "nginx.conf")
	writeFile(t, filepath.Join(dir, "mime.types"), "types {\n    text/html html;\n}\n")
	writeFile(t, filepath.Join(dir, "module.so"), "")
	writeFile(t, nginx, `load_module `+dir+`/module.so;
events {}
http {
    include mime.types;
    include `+dir+`/conf.d/*.conf;
    include `+dir+`/sites/*.conf;
}
`)
	agent := filepath.Join(dir, "conf.d", "agent.conf")
	writeFile(t, agent, "NginxModuleEnabled ON;\n")
	got := checkConf(nginx, os.Stat)
	want := []string{
		"conf " + nginx + ": load_module " + dir + "/module.so;",
		"path conf:" + nginx + " " + dir + "/module.so ok file",
		"conf " + nginx + ": events {}",
		"conf " + nginx + ": http {",
		"conf " + nginx + ": include mime.types;",
		"path conf:" + nginx + " " + dir + "/mime.types ok file",
		"conf " + dir + "/mime.types: types {",
		"conf " + dir + "/mime.types: text/html html;",
		"conf " + dir + "/mime.types: }",
		"conf " + nginx + ": include " + dir + "/conf.d/*.conf;",
		"path conf:" + nginx + " " + agent + " ok file",
		"conf " + agent + ": NginxModuleEnabled ON;",
		"conf " + nginx + ": include " + dir + "/sites/*.conf;",
		"path conf:" + nginx + " " + dir + "/sites/*.conf missing",
		"conf " + nginx + ": }",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkConf:\n%q\nwant\n%q", got, want)
	}
}
