package config

import (
	"log/slog"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlagsOverrideTheFileOnlyWhenGiven(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f := NewFlags(fs)
	if err := fs.Parse([]string{"--config-file=/tmp/x.yaml", "--listen-addr=127.0.0.1:9", "--enable-prometheus-cr-watcher",
		"--zap-log-level=debug", "--zap-devel", "--zap-time-encoding=iso8601"}); err != nil {
		t.Fatal(err)
	}
	cfg := Default()
	cfg.KubeConfigPath = "/from/file"
	f.Apply(&cfg)
	if f.ConfigFile != "/tmp/x.yaml" || cfg.ListenAddr != "127.0.0.1:9" || !cfg.PrometheusCR.Enabled || cfg.KubeConfigPath != "/from/file" || f.Level() != slog.LevelDebug {
		t.Fatalf("%+v %+v", f, cfg)
	}
}
