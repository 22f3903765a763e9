package inventory

// Option configures how Normalize and Compare normalise objects.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	rules         []Rule
	parsed        []parsedRule
	dropMetaMaps  bool
	ignoredLabels map[string]bool
	ignoredAnnots map[string]bool
	sameCluster   bool
	// ids pair objects across the two sides (PairBy), by side.
	wantIDs, gotIDs map[key]string
	// generated are each side's provider-generated values (Generated).
	wantGen, gotGen map[string]string
}

// SameCluster says both inventories come from one cluster (before and
// after): fields serverWritten drops only across clusters - a token
// Secret's data, a generated name - are then compared, since on one
// cluster a change to them was made by someone. Default: the inventories
// are from two clusters.
func SameCluster() Option {
	return optionFunc(func(o *options) { o.sameCluster = true })
}

// PairBy pairs Compare's objects across the two sides by an identity of
// the caller's - their state address - instead of by name: want and got
// map each side's objects (Version ignored) to it. Two objects of one
// identity are compared whatever their names (an object named by
// generateName has a different name on each cluster); an object not
// listed is paired by group, kind, namespace and name. Default: every
// object is paired by name.
func PairBy(want, got map[Ref]string) Option {
	ids := func(m map[Ref]string) map[key]string {
		out := make(map[key]string, len(m))
		for r, id := range m {
			out[r.key()] = id
		}
		return out
	}
	return optionFunc(func(o *options) { o.wantIDs, o.gotIDs = ids(want), ids(got) })
}

// Generated names the values a provider generated on each side - a
// random_password's result, a random_id's hex - each mapped to a
// placeholder naming its source, e.g. "${random_password.db.result}".
// Compare replaces each side's own values with their placeholders in
// every string of that side's objects (in a Secret's data, inside the
// base64), so a Secret built from a random_password compares equal when
// each cluster holds its own side's password, and still differs where
// one holds anything else. A value shorter than MinGenerated is replaced
// only where a whole string equals it: inside a longer one it would match
// text it did not make. Default: none.
func Generated(want, got map[string]string) Option {
	return optionFunc(func(o *options) { o.wantGen, o.gotGen = want, got })
}

// WithRules adds rules to the set in force (DefaultRules() unless
// ReplaceRules says otherwise). Default: none added.
func WithRules(rules ...Rule) Option {
	return optionFunc(func(o *options) { o.rules = append(o.rules, rules...) })
}

// ReplaceRules puts rules in place of DefaultRules(); with none, no
// server default is dropped. Options apply in order, so WithRules before
// ReplaceRules is overwritten by it. Default: DefaultRules().
func ReplaceRules(rules ...Rule) Option {
	return optionFunc(func(o *options) { o.rules = append([]Rule(nil), rules...) })
}

// WithoutLabelsAndAnnotations drops metadata.labels and
// metadata.annotations entirely, for comparisons that are about spec
// alone. Default: both are compared (less the ignored keys).
func WithoutLabelsAndAnnotations() Option {
	return optionFunc(func(o *options) { o.dropMetaMaps = true })
}

// IgnoreLabels drops these label keys, e.g. an engine's own marker label.
// Default: only kubernetes.io/metadata.name, which the API server puts on
// every Namespace.
func IgnoreLabels(keys ...string) Option {
	return optionFunc(func(o *options) {
		for _, k := range keys {
			o.ignoredLabels[k] = true
		}
	})
}

// IgnoreAnnotations drops these annotation keys. Default: only the keys
// servers and controllers write on their own -
// kubectl.kubernetes.io/last-applied-configuration,
// deployment.kubernetes.io/{revision,desired-replicas,max-replicas},
// deprecated.daemonset.template.generation,
// control-plane.alpha.kubernetes.io/leader,
// endpoints.kubernetes.io/last-change-trigger-time and
// kubernetes.io/service-account.uid.
func IgnoreAnnotations(keys ...string) Option {
	return optionFunc(func(o *options) {
		for _, k := range keys {
			o.ignoredAnnots[k] = true
		}
	})
}

func newOptions(opts []Option) *options {
	o := &options{rules: DefaultRules(), ignoredLabels: map[string]bool{}, ignoredAnnots: map[string]bool{}}
	for _, k := range defaultIgnoredLabels() {
		o.ignoredLabels[k] = true
	}
	for _, k := range defaultIgnoredAnnotations() {
		o.ignoredAnnots[k] = true
	}
	for _, opt := range opts {
		opt.apply(o)
	}
	for _, r := range o.rules {
		o.parsed = append(o.parsed, r.parse())
	}
	return o
}
