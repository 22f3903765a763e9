package recordstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/internal/substrate/local"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// backendRoot keeps its state in the cluster (the backend reads the
// cluster from KUBE_CONFIG_PATH, which the workspace sets), in the same
// namespace as its objects.
const backendRoot = `terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
  backend "kubernetes" {
    secret_suffix = "records"
    namespace     = "NAMESPACE"
  }
}

provider "kubernetes" {}

resource "kubernetes_config_map_v1" "one" {
  metadata {
    name      = "records-one"
    namespace = "NAMESPACE"
  }
  data = { colour = "blue" }
}

resource "kubernetes_config_map_v1" "many" {
  count = 2
  metadata {
    name      = "records-many-${count.index}"
    namespace = "NAMESPACE"
  }
  data = { colour = "green" }
}
`

// TestKubernetesBackend runs both stock CLIs on the kubernetes backend of a
// real API server and proves each record-store check by a BREAK that
// corrupts the records behind the engine's back and is named by the
// check's failure.
func TestKubernetesBackend(t *testing.T) {
	c := testenv.LocalCluster(t, "records", local.WithPods(false))
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, cli := range []string{"tofu", "terraform"} {
		t.Run(cli, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ns := "records-" + cli
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			store := recordstore.Store{Namespace: ns, Suffix: "records"}
			ws := testenv.Workspace(t, cli, strings.ReplaceAll(backendRoot, "NAMESPACE", ns), c.KubeconfigPath())
			if _, err := ws.Init(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			listed, err := ws.StateList(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(ws.Dir, "terraform.tfstate")); err == nil {
				t.Errorf("%s wrote terraform.tfstate beside a root on the kubernetes backend", cli)
			}
			rec := mustRead(ctx, t, cs, store)

			t.Run("the record names what the engine manages", func(t *testing.T) {
				if err := recordstore.Manages(store, rec, listed); err != nil {
					t.Fatal(err)
				}
				if len(listed) != 3 {
					t.Fatalf("state list: %v, want three addresses", listed)
				}
				// BREAK: take one resource out of the Secret behind the engine's back.
				restore := corrupt(ctx, t, cs, store, func(st map[string]any) {
					st["resources"] = st["resources"].([]any)[1:]
				})
				defer restore()
				err := recordstore.Manages(store, mustRead(ctx, t, cs, store), listed)
				if err == nil || !strings.Contains(err.Error(), "lacks ") {
					t.Fatalf("BREAK (a resource taken out of the record) held: %v", err)
				}
			})

			t.Run("serial only grows, lineage never changes", func(t *testing.T) {
				if _, err := ws.Apply(ctx, engine.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
				after := mustRead(ctx, t, cs, store)
				if err := recordstore.Follows(store, rec, after); err != nil {
					t.Fatal(err)
				}
				// BREAK: write the serial back by one, then a new lineage.
				restore := corrupt(ctx, t, cs, store, func(st map[string]any) { st["serial"] = float64(rec.Serial - 1) })
				err := recordstore.Follows(store, rec, mustRead(ctx, t, cs, store))
				restore()
				if err == nil || !strings.Contains(err.Error(), "serial went back") {
					t.Fatalf("BREAK (serial written back) held: %v", err)
				}
				restore = corrupt(ctx, t, cs, store, func(st map[string]any) { st["lineage"] = "gauntlet-break-lineage" })
				err = recordstore.Follows(store, rec, mustRead(ctx, t, cs, store))
				restore()
				if err == nil || !strings.Contains(err.Error(), "gauntlet-break-lineage") {
					t.Fatalf("BREAK (lineage replaced) held: %v", err)
				}
			})

			t.Run("a plan changes no record", func(t *testing.T) {
				before, err := recordstore.Take(ctx, cs, ns)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ws.Plan(ctx, engine.PlanOptions{}); err != nil {
					t.Fatal(err)
				}
				after, err := recordstore.Take(ctx, cs, ns)
				if err != nil {
					t.Fatal(err)
				}
				if err := recordstore.Unchanged(ns, before, after, "Secret/"); err != nil {
					t.Fatal(err)
				}
				// BREAK: a write to the state Secret between the snapshots.
				s, err := cs.CoreV1().Secrets(ns).Get(ctx, store.SecretName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels["gauntlet-break"] = "touched"
				if _, err := cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				touched, err := recordstore.Take(ctx, cs, ns)
				if err != nil {
					t.Fatal(err)
				}
				err = recordstore.Unchanged(ns, after, touched, "Secret/")
				if err == nil || !strings.Contains(err.Error(), "Secret/"+store.SecretName()+" changed") {
					t.Fatalf("BREAK (state Secret written between snapshots) held: %v", err)
				}
			})

			t.Run("the lock is released after every command", func(t *testing.T) {
				lk, err := recordstore.ReadLock(ctx, cs, store)
				if err != nil {
					t.Fatal(err)
				}
				if !lk.Exists {
					t.Fatalf("no Lease %s: the engine never locked", store.LeaseName())
				}
				if err := recordstore.Released(store, lk); err != nil {
					t.Fatal(err)
				}
				// BREAK: hold the Lease as a crashed command would. The check
				// names the holder, the engine refuses to plan naming it, and
				// force-unlock with that ID frees it.
				const id = "5f2d1c3e-gauntlet-break-0000-000000000000"
				info := `{"ID":"` + id + `","Operation":"OperationTypeApply","Who":"gauntlet-break"}`
				patch := `{"metadata":{"annotations":{"` + recordstore.LockInfoAnnotation + `":` + jsonString(info) + `}},"spec":{"holderIdentity":"` + id + `"}}`
				if _, err := cs.CoordinationV1().Leases(ns).Patch(ctx, store.LeaseName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				lk, err = recordstore.ReadLock(ctx, cs, store)
				if err != nil {
					t.Fatal(err)
				}
				if err := recordstore.Released(store, lk); err == nil || !strings.Contains(err.Error(), id) {
					t.Fatalf("BREAK (Lease held) held: %v", err)
				}
				_, err = ws.Plan(ctx, engine.PlanOptions{})
				var ce *engine.CallError
				if !errors.As(err, &ce) || !strings.Contains(ce.Call.Output, id) {
					t.Fatalf("a plan against a held lock: %v, want a refusal naming lock %s", err, id)
				}
				if _, err := ws.Run(ctx, []string{"force-unlock", "-force", id}); err != nil {
					t.Fatal(err)
				}
				if _, err := ws.Plan(ctx, engine.PlanOptions{}); err != nil {
					t.Fatalf("plan after force-unlock: %v", err)
				}
			})

			t.Run("a missing record is named", func(t *testing.T) {
				s, err := cs.CoreV1().Secrets(ns).Get(ctx, store.SecretName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				// BREAK: take the state Secret away, then put it back.
				if err := cs.CoreV1().Secrets(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				_, err = recordstore.Read(ctx, cs, store)
				s.ResourceVersion, s.UID = "", ""
				if _, cerr := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); cerr != nil {
					t.Fatal(cerr)
				}
				if !errors.Is(err, recordstore.ErrNoRecord) || !strings.Contains(err.Error(), store.SecretName()) {
					t.Fatalf("BREAK (state Secret deleted) held: %v", err)
				}
				if _, err := recordstore.Read(ctx, cs, store); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func mustRead(ctx context.Context, t *testing.T, cs kubernetes.Interface, s recordstore.Store) *recordstore.Record {
	t.Helper()
	rec, err := recordstore.Read(ctx, cs, s)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// corrupt rewrites the state in the Secret with f and returns the undo.
func corrupt(ctx context.Context, t *testing.T, cs kubernetes.Interface, s recordstore.Store, f func(map[string]any)) func() {
	t.Helper()
	restore, err := recordstore.Rewrite(ctx, cs, s, func(st map[string]any) error { f(st); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := restore(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
