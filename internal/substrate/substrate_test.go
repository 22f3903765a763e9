package substrate

import (
	"context"
	"strings"
	"testing"
)

func TestNewRefusesWhatItCannotBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"podman", Config{}, `substrate "podman": want local, kind, kubeconfig`},
		{"kubeconfig", Config{}, "needs the existing cluster's kubeconfig"},
		{"local", Config{}, "no toolchain"},
	} {
		_, err := New(context.Background(), tc.name, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q): %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestNewBuildsEachSubstrate(t *testing.T) {
	for _, name := range Names() {
		if name == "local" {
			continue // needs a resolved toolchain: the e2e tests start it
		}
		p, err := New(context.Background(), name, Config{Kubeconfig: "/nonexistent/kubeconfig"})
		if err != nil || p == nil {
			t.Errorf("New(%q): %v", name, err)
		}
	}
}
