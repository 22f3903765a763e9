package inventory

import "strings"

// written is a field the API server or a controller writes on its own, so
// that two clusters holding the same configuration hold different values
// there by construction. Normalize drops it; see serverWritten.
type written struct {
	// name says what the rule is, for its test and for a reader.
	name string
	// kind limits the rule to one kind; "" is every kind.
	kind string
	// path is the map keys from the object's root to the field dropped
	// (keys may hold dots: data, "ca.crt").
	path []string
	// when, if set, limits the rule to objects it accepts.
	when func(obj map[string]any) bool
	// acrossOnly drops the field only when two clusters are compared: on
	// one cluster (SameCluster) a token that changed or a name that moved
	// was changed by someone, and is compared.
	acrossOnly bool
}

// serverWritten is the one table of fields never compared across clusters
// because the server or a controller writes them, not the configuration.
// Defaults the server fills in where the configuration says nothing are
// not here: they are DefaultRules (rules.go), dropped only where they
// hold the default, so a declared other value is still compared.
// Controller-written annotations and labels are
// defaultIgnoredAnnotations and defaultIgnoredLabels below.
// Provider-generated values (random_password, ...) are not dropped at all:
// each side's are matched with its own state (Generated).
func serverWritten() []written {
	meta := func(f string) []string { return []string{"metadata", f} }
	return []written{
		// Every controller reports into status; nothing declares it.
		{name: "status", path: []string{"status"}},
		// Allocated by each API server: different on every cluster.
		{name: "uid", path: meta("uid")},
		{name: "resourceVersion", path: meta("resourceVersion")},
		{name: "creationTimestamp", path: meta("creationTimestamp")},
		// Counts spec changes since creation on this cluster.
		{name: "generation", path: meta("generation")},
		// Server-side apply's record of who wrote which field, with times.
		{name: "managedFields", path: meta("managedFields")},
		// Set by older servers, derived from the name.
		{name: "selfLink", path: meta("selfLink")},
		// Set with deletionTimestamp (whose presence Normalize keeps).
		{name: "deletionGracePeriodSeconds", path: meta("deletionGracePeriodSeconds")},
		// A name the server generated from metadata.generateName: random
		// per cluster. generateName itself, which the configuration sets,
		// is compared; a name that does not start with it is compared.
		{name: "generated name", path: meta("name"), when: generatedName, acrossOnly: true},
		// The token controller fills a service-account token Secret with
		// a token signed by this cluster's key, this cluster's CA and the
		// Secret's namespace (compared in metadata anyway). Any other data
		// key, and these keys on a Secret of any other type, is compared.
		{name: "token Secret token", kind: "Secret", path: []string{"data", "token"}, when: tokenSecret, acrossOnly: true},
		{name: "token Secret ca.crt", kind: "Secret", path: []string{"data", "ca.crt"}, when: tokenSecret, acrossOnly: true},
		{name: "token Secret namespace", kind: "Secret", path: []string{"data", "namespace"}, when: tokenSecret, acrossOnly: true},
	}
}

// tokenSecret accepts a Secret of type kubernetes.io/service-account-token.
func tokenSecret(obj map[string]any) bool {
	t, _ := obj["type"].(string)
	return t == "kubernetes.io/service-account-token"
}

// generatedName accepts an object whose name starts with its non-empty
// generateName: the server made the rest.
func generatedName(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	prefix, _ := md["generateName"].(string)
	name, _ := md["name"].(string)
	return prefix != "" && strings.HasPrefix(name, prefix)
}

// drop removes the field from obj where the rule applies; a map left
// empty by it goes too (data with only a token in it is no data the
// configuration declared).
func (w written) drop(obj map[string]any, kind string, sameCluster bool) {
	if (w.kind != "" && w.kind != kind) || (w.acrossOnly && sameCluster) || (w.when != nil && !w.when(obj)) {
		return
	}
	parents := []map[string]any{obj}
	m := obj
	for _, k := range w.path[:len(w.path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		parents, m = append(parents, next), next
	}
	delete(m, w.path[len(w.path)-1])
	for i := len(parents) - 1; i > 0 && len(parents[i]) == 0; i-- {
		delete(parents[i-1], w.path[i-1])
	}
}

// defaultIgnoredAnnotations are annotation keys always dropped: each is
// written by a server or controller, never by a configuration.
func defaultIgnoredAnnotations() []string {
	return []string{
		"kubectl.kubernetes.io/last-applied-configuration", // kubectl apply's own bookkeeping
		"deployment.kubernetes.io/revision",                // Deployment controller
		"deployment.kubernetes.io/desired-replicas",        // Deployment controller, on ReplicaSets
		"deployment.kubernetes.io/max-replicas",            // Deployment controller, on ReplicaSets
		"deprecated.daemonset.template.generation",         // DaemonSet controller
		"control-plane.alpha.kubernetes.io/leader",         // leader election on Endpoints/ConfigMaps
		"endpoints.kubernetes.io/last-change-trigger-time", // Endpoints controller
		"kubernetes.io/service-account.uid",                // token controller, on token Secrets
	}
}

// defaultIgnoredLabels are label keys a server writes on its own.
func defaultIgnoredLabels() []string {
	return []string{"kubernetes.io/metadata.name"}
}
