package stage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// held is a ConfigMap a finalizer holds: a delete only marks it.
var held = estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "held"}

// finalizingSide is a side whose fake server deletes as a real one does
// an object with finalizers: it only sets the deletionTimestamp. The
// object goes when release is called (its controller done), or never.
func finalizingSide(t *testing.T, objs ...*unstructured.Unstructured) (sd *Side, release func(estate.Object)) {
	t.Helper()
	var ros []runtime.Object
	for _, u := range objs {
		ros = append(ros, u)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"}, ros...)
	tracker := client.Tracker()
	client.PrependReactor("delete", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		obj, err := tracker.Get(configMaps, d.GetNamespace(), d.GetName())
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured)
		if len(u.GetFinalizers()) == 0 {
			return true, nil, tracker.Delete(configMaps, d.GetNamespace(), d.GetName())
		}
		if u.GetDeletionTimestamp() == nil {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}
		return true, nil, tracker.Update(configMaps, u, d.GetNamespace())
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	sd = &Side{Name: "subject", Dynamic: client, Mapper: mapper, DeleteWait: 300 * time.Millisecond}
	return sd, func(o estate.Object) {
		if err := tracker.Delete(configMaps, o.Namespace, o.Name); err != nil {
			t.Errorf("release %s: %v", o, err)
		}
	}
}

func configMap(o estate.Object, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(o.Namespace)
	u.SetName(o.Name)
	u.SetFinalizers(finalizers)
	return u
}

// An out-of-band delete of an object a finalizer holds returns only once
// the object is gone: what comes after it (a measurement, a create of the
// same name) must not meet it Terminating.
func TestDeleteWaitsUntilTheObjectIsGone(t *testing.T) {
	sd, release := finalizingSide(t, configMap(held, "example.com/hold"))
	sd.DeleteWait = 10 * time.Second
	go func() {
		time.Sleep(200 * time.Millisecond)
		release(held)
	}()
	ctx := context.Background()
	if err := sd.Delete(ctx, held); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if u, err := sd.Get(ctx, held); err != nil || u != nil {
		t.Errorf("after Delete the object is still there: %v (%v)", u, err)
	}
}

// One that never goes within the bound is an error naming it and its
// finalizers, never a finding.
func TestDeleteNamesWhatHoldsAnObject(t *testing.T) {
	sd, _ := finalizingSide(t, configMap(held, "example.com/hold"))
	err := sd.Delete(context.Background(), held)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap ns/held") || !strings.Contains(err.Error(), "example.com/hold") ||
		!strings.Contains(err.Error(), "terminating") {
		t.Fatalf("Delete of a held object = %v", err)
	}
	if len(result.FindingsIn(err)) != 0 {
		t.Errorf("a delete that did not finish reads as a finding: %v", err)
	}
}

// A BREAK whose deletion never finishes could not run, naming the object
// and its finalizers; it neither proves nor holds its check.
func TestStuckDeleteBreakCouldNotRun(t *testing.T) {
	sd, _ := finalizingSide(t, configMap(held, "example.com/hold"))
	victim := Object{Address: "kubernetes_config_map_v1.held", Ref: held}
	r := &Run{Subject: sd, Objects: []Object{victim}}
	rec := NewRecorder()
	rec.Check("c", nil, "fine")
	r.breakSubject(context.Background(), rec, Breaking{Name: "delete", Covers: []string{"c"}, Predict: []result.Prediction{existsPredict(victim, absent)}},
		func(ctx context.Context, sd *Side) (Measured, error) {
			return sd.deleted(ctx, held, func() (Measured, error) {
				u, err := sd.Get(ctx, held)
				if err != nil {
					return nil, err
				}
				if !exists(u) {
					return one("c", &result.Finding{Address: victim.Address, Object: held.String(), Field: fieldExists, Want: present, Got: absent}), nil
				}
				return one("c", nil), nil
			})
		})
	var st result.Stage
	rec.Fill(&st)
	b := st.Breaks[0]
	if b.Outcome != result.CouldNotRun || !strings.Contains(b.Detail, "ConfigMap ns/held") || !strings.Contains(b.Detail, "example.com/hold") {
		t.Errorf("a BREAK whose delete never finished: %s, %q", b.Outcome, b.Detail)
	}
}

// A terminating object is absent to "is it there?", while the world key
// still tells it apart from one gone.
func TestTerminatingCountsAsAbsent(t *testing.T) {
	gone := estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "gone"}
	live := estate.Object{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "live"}
	sd, _ := finalizingSide(t, configMap(held, "example.com/hold"), configMap(live))
	ctx := context.Background()
	if err := sd.Delete(ctx, held); err == nil {
		t.Fatal("the held object went")
	}
	objs := []Object{{Address: "a.held", Ref: held}, {Address: "a.gone", Ref: gone}, {Address: "a.live", Ref: live}}
	miss, err := sd.Missing(ctx, objs)
	if err != nil || len(miss) != 2 || miss[0].Ref != held || miss[1].Ref != gone {
		t.Errorf("Missing = %+v, %v; want held and gone", miss, err)
	}
	pres, err := sd.Present(ctx, objs)
	if err != nil || len(pres) != 1 || pres[0].Ref != live {
		t.Errorf("Present = %+v, %v; want live alone", pres, err)
	}
	r := &Run{Subject: sd, Objects: objs}
	k, err := r.keyOf(ctx, sd)
	if err != nil || k[held.String()] != "terminating" || k[gone.String()] != absent || k[live.String()] != present {
		t.Errorf("world key %v, %v", k, err)
	}
}

// Recreating an object still terminating waits until it is gone and
// creates it again, rather than taking it for put back.
func TestRecreateWaitsOutATerminatingObject(t *testing.T) {
	sd, release := finalizingSide(t, configMap(held, "example.com/hold"))
	ctx := context.Background()
	if err := sd.Delete(ctx, held); err == nil {
		t.Fatal("the held object went")
	}
	sd.DeleteWait = 10 * time.Second
	go func() {
		time.Sleep(200 * time.Millisecond)
		release(held)
	}()
	if err := sd.Recreate(ctx, held, configMap(held)); err != nil {
		t.Fatalf("Recreate: %v", err)
	}
	u, err := sd.Get(ctx, held)
	if err != nil || !exists(u) {
		t.Errorf("after Recreate: %v (%v)", u, err)
	}
}

// An object its controller makes again at once under the same name (a
// namespace's kube-root-ca.crt) is gone once the one deleted is: Delete
// waits for that uid, not for the name to be free.
func TestDeleteOfAnObjectMadeAgain(t *testing.T) {
	cm := configMap(held)
	cm.SetUID("first")
	sd, _ := finalizingSide(t, cm)
	client := sd.Dynamic.(*dynamicfake.FakeDynamicClient)
	client.PrependReactor("delete", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		again := configMap(held)
		again.SetUID("second")
		return true, nil, client.Tracker().Update(configMaps, again, held.Namespace)
	})
	if err := sd.Delete(context.Background(), held); err != nil {
		t.Fatalf("Delete of an object its controller makes again: %v", err)
	}
}
