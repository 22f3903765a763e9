package inventory_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func inv(t *testing.T, objs ...string) inventory.Inventory {
	t.Helper()
	var i inventory.Inventory
	for _, s := range objs {
		i.Objects = append(i.Objects, obj(t, s))
	}
	return i
}

// normalised is the JSON a Difference holds for a whole object.
func normalised(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(inventory.Normalize(obj(t, s)).Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const deploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"metrics-server","namespace":"kube-system",
	"labels":{"app.kubernetes.io/name":"metrics-server"}},"spec":{"replicas":2,"template":{"spec":{"containers":[
	{"name":"metrics-server","image":"ms:1","args":["--cert-dir=/tmp","--secure-port=10250","--v=2"]}]}}}}`

func TestCompare(t *testing.T) {
	msRef := inventory.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "kube-system", Name: "metrics-server"}
	for _, tc := range []struct {
		name      string
		want, got inventory.Inventory
		opts      []inventory.Option
		diffs     []inventory.Difference
		text      string
	}{{
		name: "identical objects are equal",
		want: inv(t, deploy),
		got:  inv(t, deploy),
		text: "no differences in 1 objects",
	}, {
		name: "server-set fields and defaults do not count",
		want: inv(t, deploy),
		got: inv(t, strings.Replace(deploy, `"namespace":"kube-system",`,
			`"namespace":"kube-system","uid":"x","resourceVersion":"9","annotations":{"deployment.kubernetes.io/revision":"1"},`, 1)),
		text: "no differences in 1 objects",
	}, {
		name: "a changed list element is named by its index",
		want: inv(t, deploy),
		got:  inv(t, strings.Replace(deploy, "--secure-port=10250", "--secure-port=10251", 1)),
		diffs: []inventory.Difference{{Object: msRef, Path: "spec.template.spec.containers[0].args[1]",
			Want: `"--secure-port=10250"`, Got: `"--secure-port=10251"`}},
		text: `Deployment kube-system/metrics-server: spec.template.spec.containers[0].args[1]: want "--secure-port=10250", got "--secure-port=10251"`,
	}, {
		name: "a longer list shows the extra element",
		want: inv(t, deploy),
		got:  inv(t, strings.Replace(deploy, `"--v=2"`, `"--v=2","--kubelet-insecure-tls"`, 1)),
		diffs: []inventory.Difference{{Object: msRef, Path: "spec.template.spec.containers[0].args[3]",
			Got: `"--kubelet-insecure-tls"`}},
		text: `Deployment kube-system/metrics-server: spec.template.spec.containers[0].args[3]: want nothing, got "--kubelet-insecure-tls"`,
	}, {
		name:  "a field on one side only, and a label key that needs quoting",
		want:  inv(t, deploy),
		got:   inv(t, strings.Replace(strings.Replace(deploy, `"replicas":2,`, ``, 1), `"metrics-server"}}`, `"other"}}`, 1)),
		diffs: []inventory.Difference{{Object: msRef, Path: `metadata.labels["app.kubernetes.io/name"]`, Want: `"metrics-server"`, Got: `"other"`}, {Object: msRef, Path: "spec.replicas", Want: "2"}},
		text: `Deployment kube-system/metrics-server: metadata.labels["app.kubernetes.io/name"]: want "metrics-server", got "other"` + "\n" +
			`Deployment kube-system/metrics-server: spec.replicas: want 2, got nothing`,
	}, {
		name:  "a value of another type",
		want:  inv(t, deploy),
		got:   inv(t, strings.Replace(deploy, `"replicas":2`, `"replicas":"2"`, 1)),
		diffs: []inventory.Difference{{Object: msRef, Path: "spec.replicas", Want: `2`, Got: `"2"`}},
	}, {
		name: "objects on one side only are one entry each, in kind order",
		want: inv(t, deploy, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`),
		got:  inv(t, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"}}`),
		diffs: []inventory.Difference{
			{Object: inventory.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "r"},
				Got: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"}}`},
			{Object: inventory.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "n", Name: "a"},
				Want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`},
			{Object: msRef, Want: normalised(t, deploy)},
		},
		text: "ClusterRole r: unexpected (found, not wanted)\nConfigMap n/a: missing (wanted, not found)\nDeployment kube-system/metrics-server: missing (wanted, not found)",
	}, {
		name: "objects match across versions, the version difference shows, named as the got side reads it",
		want: inv(t, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","namespace":"n"}}`),
		got:  inv(t, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","namespace":"n"}}`),
		diffs: []inventory.Difference{{Object: inventory.Ref{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Namespace: "n", Name: "h"},
			Path: "apiVersion", Want: `"autoscaling/v2"`, Got: `"autoscaling/v1"`}},
	}, {
		name: "labels excluded entirely",
		want: inv(t, deploy),
		got:  inv(t, strings.Replace(deploy, `"metrics-server"}}`, `"other","x":"y"},"annotations":{"a":"b"}}`, 1)),
		opts: []inventory.Option{inventory.WithoutLabelsAndAnnotations()},
		text: "no differences in 1 objects",
	}, {
		name: "a long value is shortened in the sentence only",
		want: inv(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"ca.crt":"`+strings.Repeat("A", 400)+`"}}`),
		got:  inv(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"ca.crt":"`+strings.Repeat("B", 400)+`"}}`),
		diffs: []inventory.Difference{{Object: inventory.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "n", Name: "c"}, Path: `data["ca.crt"]`,
			Want: `"` + strings.Repeat("A", 400) + `"`, Got: `"` + strings.Repeat("B", 400) + `"`}},
		text: `ConfigMap n/c: data["ca.crt"]: want "` + strings.Repeat("A", 159) + `… (402 bytes), got "` + strings.Repeat("B", 159) + `… (402 bytes)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := inventory.Compare(tc.want, tc.got, tc.opts...)
			if !reflect.DeepEqual(r.Differences, tc.diffs) {
				t.Errorf("differences:\n got %#v\nwant %#v", r.Differences, tc.diffs)
			}
			if r.Equal() != (len(tc.diffs) == 0) {
				t.Errorf("Equal() = %v with %d differences", r.Equal(), len(tc.diffs))
			}
			if tc.text != "" && r.String() != tc.text {
				t.Errorf("String():\n got %s\nwant %s", r.String(), tc.text)
			}
		})
	}
}

// TestCompareIsStable: the same inputs give the same report every time,
// including lists that differ at several places (cmp's own slice
// alignment is deliberately random, which positional comparison avoids).
func TestCompareIsStable(t *testing.T) {
	want := inv(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"l":[1,2,3,4,5,6,7,8]}}`)
	got := inv(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"l":[0,1,2,3,9,5,6,8,8,10]}}`)
	first := inventory.Compare(want, got).String()
	for i := 0; i < 50; i++ {
		if s := inventory.Compare(want, got).String(); s != first {
			t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i, s, first)
		}
	}
	if n := strings.Count(first, "\n") + 1; n != 9 {
		t.Errorf("want 9 positional differences (7 changed indexes, 2 extra), got %d:\n%s", n, first)
	}
}

// TestCompareDoesNotChangeInputs: normalisation works on copies.
func TestCompareDoesNotChangeInputs(t *testing.T) {
	w := inv(t, strings.Replace(deploy, `"namespace":"kube-system",`, `"namespace":"kube-system","uid":"x",`, 1))
	before := w.Objects[0].DeepCopy()
	inventory.Compare(w, inventory.Inventory{Objects: []*unstructured.Unstructured{}})
	if !reflect.DeepEqual(before.Object, w.Objects[0].Object) {
		t.Fatal("Compare changed an input object")
	}
}

// A Secret's values are compared by digest: a difference names the field
// and shows two different digests, equal values compare equal, and no
// report (field or whole object) prints a value.
func TestCompareNeverPrintsSecretData(t *testing.T) {
	const a, b = "c2VjcmV0LW9uZQ==", "c2VjcmV0LXR3bw=="
	sec := func(name, pw, token string) string {
		return `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"` + name + `","namespace":"ns"},"data":{"password":"` + pw + `","token":"` + token + `"},"stringData":{"plain":"literal-value"}}`
	}
	rep := inventory.Compare(inv(t, sec("db", a, a), sec("gone", a, a)), inv(t, sec("db", a, b), sec("new", b, b)))
	text := rep.String()
	for _, leak := range []string{a, b, "literal-value"} {
		if strings.Contains(text, leak) {
			t.Errorf("report prints %q:\n%s", leak, text)
		}
	}
	var field *inventory.Difference
	for i, d := range rep.Differences {
		if d.Path != "" {
			if field != nil {
				t.Errorf("more than one field differs: %s", text)
			}
			field = &rep.Differences[i]
		}
	}
	if field == nil || field.Path != "data.token" || field.Want == field.Got || !strings.Contains(field.Want, "sha256:") {
		t.Errorf("want one difference on data.token, two digests:\n%s", text)
	}
}
