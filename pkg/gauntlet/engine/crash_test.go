package engine_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const crashRoot = `terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
}

provider "kubernetes" {}

resource "kubernetes_config_map_v1" "a" {
  metadata {
    name      = "crash-a"
    namespace = "default"
  }
}

resource "kubernetes_config_map_v1" "b" {
  metadata {
    name      = "crash-b"
    namespace = "default"
  }
  data = {
    a = kubernetes_config_map_v1.a.metadata[0].name
  }
}
`

// TestSIGTERMAfterFirstCreateLeavesExactlyTheFirst interrupts an apply at
// an exact point - right after A's create response went through the wire
// proxy - twice in a row in the first tier, five times in the second: the
// engine exits non-zero, A exists, B does not, and the state holds A only,
// every time.
func TestSIGTERMAfterFirstCreateLeavesExactlyTheFirst(t *testing.T) {
	c := testenv.LocalCluster(t, "crash", local.WithPods(false))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	proxy, err := wire.Start(ctx, c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close(context.Background())
	kc := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := proxy.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	rounds := 2
	if testenv.AllTiers() {
		rounds = 5
	}
	for _, cli := range []string{"tofu", "terraform"} {
		for round := 1; round <= rounds; round++ {
			ws := testenv.Workspace(t, cli, crashRoot, kc)
			if _, err := ws.Init(ctx); err != nil {
				t.Fatal(err)
			}
			intr := engine.NewInterrupter()
			fired := 0
			var ackErr error
			stop := proxy.After(wire.Match{Verb: "create", Resource: "configmaps", Namespace: "default", Name: "crash-a"}, func(wire.Request) {
				fired++
				ackErr = intr.Interrupt(30 * time.Second)
			})
			_, err := ws.Apply(ctx, engine.ApplyOptions{Parallelism: 1}, intr.RunOptions()...)
			stop()
			exit := engine.ExitCode(err)
			if fired != 1 || ackErr != nil || err == nil || exit == 0 {
				t.Fatalf("%s round %d: trigger fired %d times (ack: %v), apply error %v (exit %d); want one acknowledged SIGTERM and a non-zero exit", cli, round, fired, ackErr, err, exit)
			}
			if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "crash-a", metav1.GetOptions{}); err != nil {
				t.Fatalf("%s round %d: A does not exist: %v", cli, round, err)
			}
			if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "crash-b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("%s round %d: B exists or cannot be read (%v): the walker went past the interrupt", cli, round, err)
			}
			list, err := ws.StateList(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(list, []string{"kubernetes_config_map_v1.a"}) {
				t.Fatalf("%s round %d: state holds %v, want A only", cli, round, list)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{Destroy: true}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s round %d: exit %d, A created, B not, state [A]", cli, round, exit)
		}
	}
}
