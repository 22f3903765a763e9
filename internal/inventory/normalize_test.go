package inventory_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// obj builds an object from JSON, as the dynamic client would decode it
// (numbers as int64).
func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatalf("bad test object %s: %v", s, err)
	}
	return u
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want string
		opts     []inventory.Option
	}{{
		name: "server metadata and status go",
		in: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n","uid":"u1","resourceVersion":"7",
			"generation":2,"creationTimestamp":"2026-01-01T00:00:00Z","selfLink":"/x","deletionGracePeriodSeconds":0,
			"managedFields":[{"manager":"m"}]},"data":{"k":"v"},"status":{"x":1}}`,
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"k":"v"}}`,
	}, {
		name: "a Pod's admission-made token volume loses its random name; the Pod's own volume names stay",
		in: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"restartPolicy":"Always",
			"containers":[{"name":"c","volumeMounts":[{"name":"data","mountPath":"/d"},{"name":"kube-api-access-7njqc","mountPath":"/t"}]}],
			"volumes":[{"name":"data","emptyDir":{}},{"name":"kube-api-access-7njqc","projected":{"defaultMode":420}}]}}`,
		want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{
			"containers":[{"name":"c","volumeMounts":[{"name":"data","mountPath":"/d"},{"mountPath":"/t"}]}],
			"volumes":[{"name":"data","emptyDir":{}},{"projected":{}}]}}`,
	}, {
		name: "a deletion timestamp keeps its presence, not its time",
		in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","deletionTimestamp":"2026-01-01T00:00:00Z"}}`,
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","deletionTimestamp":"set"}}`,
	}, {
		name: "controller annotations go, and the map with them when empty",
		in: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":{"deployment.kubernetes.io/revision":"3",
			"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`,
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`,
	}, {
		name: "declared labels and annotations stay by default",
		in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"web"},"annotations":{"note":"x"}}}`,
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"web"},"annotations":{"note":"x"}}}`,
	}, {
		name: "IgnoreLabels and IgnoreAnnotations drop just those keys",
		in: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"web","engine.example/by":"tofu"},
			"annotations":{"note":"x","engine.example/run":"42"}}}`,
		opts: []inventory.Option{inventory.IgnoreLabels("engine.example/by"), inventory.IgnoreAnnotations("engine.example/run")},
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"web"},"annotations":{"note":"x"}}}`,
	}, {
		name: "WithoutLabelsAndAnnotations drops both maps",
		in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"web"},"annotations":{"note":"x"}}}`,
		opts: []inventory.Option{inventory.WithoutLabelsAndAnnotations()},
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
	}, {
		name: "the namespace name label the server adds goes",
		in:   `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"kubernetes.io/metadata.name":"n"}},"spec":{"finalizers":["kubernetes"]}}`,
		want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"spec":{}}`,
	}, {
		name: "Service: allocated fields always go, defaults only when default",
		in: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"10.96.0.7","clusterIPs":["10.96.0.7"],
			"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster","sessionAffinity":"ClientIP",
			"type":"ClusterIP","ports":[{"port":80,"protocol":"TCP","targetPort":8080},{"port":53,"protocol":"UDP"}]}}`,
		want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"sessionAffinity":"ClientIP",
			"ports":[{"port":80,"targetPort":8080},{"port":53,"protocol":"UDP"}]}}`,
	}, {
		name: "a rule applies to its kind only",
		in:   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"clusterIP":"10.0.0.1"}}`,
		want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"clusterIP":"10.0.0.1"}}`,
	}, {
		name: "ReplaceRules with none keeps server defaults",
		in:   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"10.96.0.7","sessionAffinity":"None"}}`,
		opts: []inventory.Option{inventory.ReplaceRules()},
		want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"10.96.0.7","sessionAffinity":"None"}}`,
	}, {
		name: "WithRules adds to the defaults",
		in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"stamp":"now","k":"v"}}`,
		opts: []inventory.Option{inventory.WithRules(inventory.Rule{Kind: "ConfigMap", Path: "data.stamp"})},
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`,
	}, {
		name: "owner reference uids go, the rest of the reference stays",
		in:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"kind":"Deployment","name":"d","uid":"u"}]}}`,
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"kind":"Deployment","name":"d"}]}}`,
	}, {
		name: "pod template defaults go in every container, other values stay",
		in: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,"revisionHistoryLimit":10,
			"progressDeadlineSeconds":600,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},
			"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"d"}},"spec":{"restartPolicy":"Always",
			"dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30,
			"containers":[
				{"name":"a","image":"a:1","imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log",
				 "terminationMessagePolicy":"File","resources":{},"ports":[{"containerPort":80,"protocol":"TCP"}]},
				{"name":"b","image":"b:1","imagePullPolicy":"Never","terminationMessagePath":"/tmp/msg",
				 "terminationMessagePolicy":"File","resources":{"limits":{"cpu":"1"}},
				 "livenessProbe":{"exec":{"command":["true"]},"timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,"failureThreshold":3}}]}}}}`,
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,
			"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[
				{"name":"a","image":"a:1","ports":[{"containerPort":80}]},
				{"name":"b","image":"b:1","imagePullPolicy":"Never","terminationMessagePath":"/tmp/msg","resources":{"limits":{"cpu":"1"}},
				 "livenessProbe":{"exec":{"command":["true"]},"periodSeconds":5}}]}}}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := obj(t, tc.in)
			before := in.DeepCopy()
			got := inventory.Normalize(in, tc.opts...)
			want := obj(t, tc.want)
			if !reflect.DeepEqual(got.Object, want.Object) {
				g, _ := json.Marshal(got.Object)
				w, _ := json.Marshal(want.Object)
				t.Errorf("Normalize:\n got %s\nwant %s", g, w)
			}
			if !reflect.DeepEqual(in.Object, before.Object) {
				t.Error("Normalize changed its input")
			}
		})
	}
}

// TestBadRulePathsPanic: a rule that can never match is a bug in the
// rule, so it must not pass silently.
func TestBadRulePathsPanic(t *testing.T) {
	u := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	for _, path := range []string{"", "spec..x", "spec.ports[0].name", "spec.[*]", "spec.ports[*]"} {
		t.Run(path, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "inventory: rule") {
					t.Errorf("want a panic naming the rule, got %v", r)
				}
			}()
			inventory.Normalize(u, inventory.WithRules(inventory.Rule{Path: path}))
		})
	}
}

// TestDefaultRulesAreFresh: callers may change the slice they are given
// without changing anyone else's defaults.
func TestDefaultRulesAreFresh(t *testing.T) {
	a := inventory.DefaultRules()
	a[0].Path = "changed"
	if inventory.DefaultRules()[0].Path == "changed" {
		t.Fatal("DefaultRules returned shared state")
	}
}
