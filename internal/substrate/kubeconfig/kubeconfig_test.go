package kubeconfig_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/kubeconfig"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
)

func writeConfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server +
		"\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubeconfigPointingNowhereFailsWithinTheBound uses a listener that
// accepts connections and never answers: the worst case, a hang.
func TestKubeconfigPointingNowhereFailsWithinTheBound(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = kubeconfig.New(writeConfig(t, "https://"+l.Addr().String()), kubeconfig.WithTimeout(2*time.Second)).Start(context.Background(), "nowhere")
	if err == nil {
		t.Fatal("a silent server was accepted as a cluster")
	}
	if !strings.Contains(err.Error(), "did not answer") && !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("error does not say the server did not answer: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s: the 2s bound was not honoured", d)
	}
}

func TestMissingKubeconfigIsAClearError(t *testing.T) {
	_, err := kubeconfig.New(filepath.Join(t.TempDir(), "absent")).Start(context.Background(), "absent")
	if err == nil || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("want an error naming the missing file, got %v", err)
	}
}

// TestExistingClusterIsUsedAsIs points the provider at a running local
// control plane's kubeconfig; Stop must leave that cluster running.
func TestExistingClusterIsUsedAsIs(t *testing.T) {
	lc := testenv.LocalCluster(t, "existing", local.WithPods(false))
	c, err := kubeconfig.New(lc.KubeconfigPath()).Start(context.Background(), "existing")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Substrate(), "v1.37.2") || c.Capabilities().Owned {
		t.Errorf("substrate %q, capabilities %+v", c.Substrate(), c.Capabilities())
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeconfig.New(lc.KubeconfigPath()).Start(context.Background(), "again"); err != nil {
		t.Fatalf("Stop of a kubeconfig cluster stopped the real cluster: %v", err)
	}
}
