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
