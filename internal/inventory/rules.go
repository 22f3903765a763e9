package inventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Rule drops a field a server sets on its own, so that an object compares
// equal to what a configuration declared.
type Rule struct {
	// Kind is the kind the rule applies to, e.g. "Service"; "" applies
	// it to every kind.
	Kind string
	// Path is the field, dot-separated, with [*] for every element of a
	// list: "spec.template.spec.containers[*].terminationMessagePath".
	Path string
	// Defaults, when set, limit the rule to these values (compared as
	// JSON, so 30 matches an int64 30): the field is dropped only where it
	// holds the server's default, and an explicitly declared other value
	// is still compared. With none, the field is always dropped - for
	// values the server allocates, such as a Service's clusterIP.
	Defaults []any
	// Prefix, when set, limits the rule to string values starting with it:
	// names the server generates, such as the kube-api-access-<random>
	// volume the service account admission puts in every Pod.
	Prefix string
}

// DefaultRules returns the rules Normalize and Compare apply unless
// replaced: fields every API server allocates or defaults. Each call
// returns a fresh slice.
func DefaultRules() []Rule {
	rules := []Rule{
		// Owner references name their owner by uid, which is per cluster.
		{Path: "metadata.ownerReferences[*].uid"},

		// Allocated per cluster.
		{Kind: "Service", Path: "spec.clusterIP"},
		{Kind: "Service", Path: "spec.clusterIPs"},
		{Kind: "Service", Path: "spec.ports[*].nodePort"},
		{Kind: "Service", Path: "spec.healthCheckNodePort"},
		// Follow from the cluster's network configuration.
		{Kind: "Service", Path: "spec.ipFamilies"},
		{Kind: "Service", Path: "spec.ipFamilyPolicy", Defaults: []any{"SingleStack"}},
		{Kind: "Service", Path: "spec.internalTrafficPolicy", Defaults: []any{"Cluster"}},
		{Kind: "Service", Path: "spec.externalTrafficPolicy", Defaults: []any{"Cluster"}},
		{Kind: "Service", Path: "spec.sessionAffinity", Defaults: []any{"None"}},
		{Kind: "Service", Path: "spec.type", Defaults: []any{"ClusterIP"}},
		{Kind: "Service", Path: "spec.allocateLoadBalancerNodePorts", Defaults: []any{true}},
		{Kind: "Service", Path: "spec.ports[*].protocol", Defaults: []any{"TCP"}},

		// Filled by the token controller on clusters that still make
		// token Secrets.
		{Kind: "ServiceAccount", Path: "secrets"},
		{Kind: "Secret", Path: "type", Defaults: []any{"Opaque"}},
		{Kind: "Namespace", Path: "spec.finalizers", Defaults: []any{[]any{"kubernetes"}}},
		{Kind: "APIService", Path: "spec.service.port", Defaults: []any{443}},
		{Kind: "PersistentVolumeClaim", Path: "spec.volumeMode", Defaults: []any{"Filesystem"}},
		// The bound volume is named after the claim's uid.
		{Kind: "PersistentVolumeClaim", Path: "spec.volumeName"},

		{Kind: "Deployment", Path: "spec.replicas", Defaults: []any{1}},
		{Kind: "Deployment", Path: "spec.revisionHistoryLimit", Defaults: []any{10}},
		{Kind: "Deployment", Path: "spec.progressDeadlineSeconds", Defaults: []any{600}},
		{Kind: "Deployment", Path: "spec.strategy", Defaults: []any{map[string]any{
			"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"},
		}}},
		{Kind: "DaemonSet", Path: "spec.revisionHistoryLimit", Defaults: []any{10}},
		{Kind: "DaemonSet", Path: "spec.updateStrategy", Defaults: []any{map[string]any{
			"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": 0, "maxUnavailable": 1},
		}}},
		{Kind: "StatefulSet", Path: "spec.replicas", Defaults: []any{1}},
		{Kind: "StatefulSet", Path: "spec.revisionHistoryLimit", Defaults: []any{10}},
		{Kind: "StatefulSet", Path: "spec.podManagementPolicy", Defaults: []any{"OrderedReady"}},
		{Kind: "StatefulSet", Path: "spec.updateStrategy", Defaults: []any{map[string]any{
			"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 0},
		}}},
		{Kind: "StatefulSet", Path: "spec.persistentVolumeClaimRetentionPolicy", Defaults: []any{map[string]any{
			"whenDeleted": "Retain", "whenScaled": "Retain",
		}}},
	}
	for _, kind := range []string{"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"} {
		rules = append(rules, podTemplateRules(kind, "spec.template.")...)
	}
	// A Pod is its own template, plus what admission adds to it: the
	// projected service account token volume, named at random per Pod.
	rules = append(rules, podTemplateRules("Pod", "")...)
	for _, path := range []string{"spec.volumes[*].name", "spec.containers[*].volumeMounts[*].name", "spec.initContainers[*].volumeMounts[*].name"} {
		rules = append(rules, Rule{Kind: "Pod", Path: path, Prefix: "kube-api-access-"})
	}
	return rules
}

// podTemplateRules are the defaults the API server fills into a pod
// template at prefix.
func podTemplateRules(kind, prefix string) []Rule {
	rules := []Rule{
		// A template's metadata is serialised from a Go struct whose
		// creationTimestamp has no omitempty.
		{Path: "metadata.creationTimestamp", Defaults: []any{nil}},
		{Path: "spec.restartPolicy", Defaults: []any{"Always"}},
		{Path: "spec.dnsPolicy", Defaults: []any{"ClusterFirst"}},
		{Path: "spec.schedulerName", Defaults: []any{"default-scheduler"}},
		{Path: "spec.securityContext", Defaults: []any{map[string]any{}}},
		{Path: "spec.terminationGracePeriodSeconds", Defaults: []any{30}},
		// A deprecated alias the server mirrors from serviceAccountName,
		// which is compared.
		{Path: "spec.serviceAccount"},
		{Path: "spec.volumes[*].configMap.defaultMode", Defaults: []any{420}},
		{Path: "spec.volumes[*].secret.defaultMode", Defaults: []any{420}},
		{Path: "spec.volumes[*].projected.defaultMode", Defaults: []any{420}},
	}
	for _, c := range []string{"spec.containers[*].", "spec.initContainers[*]."} {
		rules = append(rules,
			Rule{Path: c + "terminationMessagePath", Defaults: []any{"/dev/termination-log"}},
			Rule{Path: c + "terminationMessagePolicy", Defaults: []any{"File"}},
			// IfNotPresent or Always depending on the image tag.
			Rule{Path: c + "imagePullPolicy", Defaults: []any{"IfNotPresent", "Always"}},
			Rule{Path: c + "resources", Defaults: []any{map[string]any{}}},
			Rule{Path: c + "ports[*].protocol", Defaults: []any{"TCP"}},
			Rule{Path: c + "env[*].valueFrom.fieldRef.apiVersion", Defaults: []any{"v1"}},
		)
		for _, p := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
			rules = append(rules,
				Rule{Path: c + p + ".timeoutSeconds", Defaults: []any{1}},
				Rule{Path: c + p + ".periodSeconds", Defaults: []any{10}},
				Rule{Path: c + p + ".successThreshold", Defaults: []any{1}},
				Rule{Path: c + p + ".failureThreshold", Defaults: []any{3}},
			)
		}
	}
	for i := range rules {
		rules[i].Kind, rules[i].Path = kind, prefix+rules[i].Path
	}
	return rules
}

// parsedRule is a Rule ready to apply: its path split into steps and its
// defaults rendered once.
type parsedRule struct {
	kind     string
	steps    []step
	defaults [][]byte
	prefix   string
}

// step is one path element: a map field, optionally followed by [*].
type step struct {
	field string
	each  bool
}

func (r Rule) parse() parsedRule {
	if r.Path == "" {
		panic(fmt.Sprintf("inventory: rule for kind %q has no path", r.Kind))
	}
	p := parsedRule{kind: r.Kind, prefix: r.Prefix}
	for _, s := range strings.Split(r.Path, ".") {
		st := step{field: s}
		if f, ok := strings.CutSuffix(s, "[*]"); ok {
			st = step{field: f, each: true}
		}
		if st.field == "" || strings.ContainsAny(st.field, "[]") {
			panic(fmt.Sprintf("inventory: rule path %q: bad element %q (want a field name, optionally followed by [*])", r.Path, s))
		}
		p.steps = append(p.steps, st)
	}
	if p.steps[len(p.steps)-1].each {
		// Dropping list elements would shift every index after them.
		panic(fmt.Sprintf("inventory: rule path %q ends in [*]; rules drop fields, not list elements", r.Path))
	}
	for _, d := range r.Defaults {
		b, err := json.Marshal(d)
		if err != nil {
			panic(fmt.Sprintf("inventory: rule path %q: default %v is not JSON: %v", r.Path, d, err))
		}
		p.defaults = append(p.defaults, b)
	}
	return p
}

func (p parsedRule) apply(obj map[string]any) { p.walk(obj, p.steps) }

func (p parsedRule) walk(m map[string]any, steps []step) {
	s := steps[0]
	v, ok := m[s.field]
	if !ok {
		return
	}
	switch {
	case len(steps) == 1: // parse guarantees the last step is a field
		if p.matches(v) {
			delete(m, s.field)
		}
	case s.each:
		list, _ := v.([]any)
		for _, e := range list {
			if child, ok := e.(map[string]any); ok {
				p.walk(child, steps[1:])
			}
		}
	default:
		if child, ok := v.(map[string]any); ok {
			p.walk(child, steps[1:])
		}
	}
}

func (p parsedRule) matches(v any) bool {
	if p.prefix != "" {
		s, ok := v.(string)
		if !ok || !strings.HasPrefix(s, p.prefix) {
			return false
		}
	}
	if len(p.defaults) == 0 {
		return true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	for _, d := range p.defaults {
		if bytes.Equal(b, d) {
			return true
		}
	}
	return false
}
