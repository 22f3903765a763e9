package baseline_test

import (
	"reflect"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/baseline"
	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func snap(t *testing.T, objs ...string) *baseline.Snapshot {
	t.Helper()
	s := &baseline.Snapshot{Scope: baseline.DefaultScope()}
	for _, o := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(o)); err != nil {
			t.Fatalf("bad test object %s: %v", o, err)
		}
		s.Inventory.Objects = append(s.Inventory.Objects, u)
	}
	return s
}

const (
	cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"kube-system","uid":"1","resourceVersion":"1"},"data":{"k":"v"}}`
	// view is an aggregated ClusterRole: the controller fills its rules.
	view = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"view","uid":"2"},
		"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}}]},
		"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`
	plain = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"plain","uid":"3"},
		"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`
	svc = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"dns","namespace":"kube-system","uid":"4"},
		"spec":{"clusterIP":"10.96.0.10","sessionAffinity":"None"}}`
)

var (
	cmRef    = inventory.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "c"}
	plainRef = inventory.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "plain"}
	viewRef  = inventory.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "view"}
	svcRef   = inventory.Ref{Version: "v1", Kind: "Service", Namespace: "kube-system", Name: "dns"}
)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after []string
		opts          []inventory.Option
		want          baseline.Diff
		text          string
	}{{
		name:   "server metadata churn is no change",
		before: []string{cm},
		after: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"kube-system","uid":"1",
			"resourceVersion":"99","generation":3,"managedFields":[{"manager":"x"}]},"data":{"k":"v"},"status":{}}`},
		text: "no change",
	}, {
		name:   "a leader-election annotation is no change",
		before: []string{cm},
		after: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"kube-system","uid":"1",
			"annotations":{"control-plane.alpha.kubernetes.io/leader":"{\"holderIdentity\":\"b\"}"}},"data":{"k":"v"}}`},
	}, {
		name:   "rules the aggregation controller refills are no change",
		before: []string{view},
		after: []string{`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"view","uid":"2"},
			"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}}]},
			"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]},{"apiGroups":["x"],"resources":["y"],"verbs":["get"]}]}`},
	}, {
		name:   "an aggregation rule edit is a change",
		before: []string{view},
		after: []string{`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"view","uid":"2"},
			"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"example/aggregate":"true"}}]}}`},
		want: baseline.Diff{Changed: []inventory.Difference{{Object: viewRef, Path: "aggregationRule.clusterRoleSelectors[0].matchLabels[\"example/aggregate\"]", Got: `"true"`},
			{Object: viewRef, Path: "aggregationRule.clusterRoleSelectors[0].matchLabels[\"rbac.authorization.k8s.io/aggregate-to-view\"]", Want: `"true"`}}},
	}, {
		name:   "rules of a plain ClusterRole are compared",
		before: []string{plain},
		after: []string{`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"plain","uid":"3"},
			"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}]}`},
		want: baseline.Diff{Changed: []inventory.Difference{{Object: plainRef, Path: "rules[0].verbs[0]", Want: `"get"`, Got: `"list"`}}},
		text: `ClusterRole plain: rules[0].verbs[0] changed: was "get", now "list"`,
	}, {
		name:   "fields inventory drops as server defaults are compared here",
		before: []string{svc},
		after: []string{`{"apiVersion":"v1","kind":"Service","metadata":{"name":"dns","namespace":"kube-system","uid":"4"},
			"spec":{"clusterIP":"10.96.0.10","sessionAffinity":"ClientIP"}}`},
		want: baseline.Diff{Changed: []inventory.Difference{{Object: svcRef, Path: "spec.sessionAffinity", Want: `"None"`, Got: `"ClientIP"`}}},
	}, {
		name:   "vanished, appeared and replaced",
		before: []string{cm, plain},
		after: []string{view, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"kube-system","uid":"9"},
			"data":{"k":"v"}}`},
		want: baseline.Diff{Vanished: []inventory.Ref{plainRef}, Appeared: []inventory.Ref{viewRef}, Replaced: []inventory.Ref{cmRef}},
		text: "ClusterRole plain: vanished\nClusterRole view: appeared\nConfigMap kube-system/c: replaced (deleted and created again)",
	}, {
		name:   "options add to the comparison",
		before: []string{cm},
		after: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"kube-system","uid":"1",
			"labels":{"engine.example/run":"7"}},"data":{"k":"v"}}`},
		opts: []inventory.Option{inventory.IgnoreLabels("engine.example/run")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := baseline.Compare(snap(t, tc.before...), snap(t, tc.after...), tc.opts...)
			if !reflect.DeepEqual(d, tc.want) {
				t.Errorf("got:\n%s\nwant:\n%s", d, tc.want)
			}
			if d.Equal() != reflect.DeepEqual(tc.want, baseline.Diff{}) {
				t.Errorf("Equal() = %v for %s", d.Equal(), d)
			}
			if tc.text != "" && d.String() != tc.text {
				t.Errorf("String():\n got %s\nwant %s", d, tc.text)
			}
		})
	}
}

// TestCompareLeavesSnapshotsAlone: dropping aggregated rules works on
// copies, so a snapshot can be compared any number of times.
func TestCompareLeavesSnapshotsAlone(t *testing.T) {
	s := snap(t, view)
	baseline.Compare(s, s)
	if _, ok := s.Inventory.Objects[0].Object["rules"]; !ok {
		t.Fatal("Compare removed the rules from the snapshot itself")
	}
}

func TestSnapshotCounts(t *testing.T) {
	s := snap(t, cm, view, plain, svc)
	if want := map[string]int{"ConfigMap": 1, "ClusterRole": 2, "Service": 1}; !reflect.DeepEqual(s.Counts(), want) {
		t.Errorf("Counts() = %v, want %v", s.Counts(), want)
	}
	if got, want := s.String(), "4 objects: 2 ClusterRole, 1 ConfigMap, 1 Service"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
