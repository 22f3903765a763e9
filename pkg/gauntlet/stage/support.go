package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/baseline"
	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
)

// planDefaults are the plan flags every stage uses unless it says
// otherwise: the plan read from its own stream, one engine call less than
// show -json of the saved plan.
func planDefaults() engine.PlanOptions { return engine.PlanOptions{Stream: true} }

// plainPlan is a plan whose failure is read as a person reads it: the
// refusal of a fence or a held lock, whose words a check asserts on.
func plainPlan() engine.PlanOptions { return engine.PlanOptions{} }

// refOf converts an estate object to an inventory ref.
func refOf(o Object) inventory.Ref {
	return inventory.Ref{Group: o.Ref.Group, Version: o.Ref.Version, Kind: o.Ref.Kind, Namespace: o.Ref.Namespace, Name: o.Ref.Name}
}

// takeBaseline snapshots the namespaces the estate writes into without
// owning, plus the cluster-scoped kinds, before anything is applied.
func (r *Run) takeBaseline(ctx context.Context, s *Side) error {
	snap, err := baseline.Take(ctx, s.Cluster.RESTConfig(), baseline.DefaultScope(r.Spec.WritesInto...))
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Baselines == nil {
		r.Baselines = map[string]any{}
	}
	r.Baselines[s.Name] = snap
	return nil
}

func (r *Run) baseline(side string) *baseline.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, _ := r.Baselines[side].(*baseline.Snapshot)
	return s
}

// baselineLine says what the baseline holds, for a detail sentence.
func (r *Run) baselineLine() string {
	b := r.baseline("subject")
	if b == nil {
		return "no baseline"
	}
	return fmt.Sprintf("%s's %d objects of the compared kinds (with every ClusterRole, ClusterRoleBinding and APIService)",
		strings.Join(r.Spec.WritesInto, ", "), b.Len())
}

// readObjects reads the live objects of objs on a side.
func readObjects(ctx context.Context, s *Side, objs []Object) (inventory.Inventory, error) {
	sel := inventory.Selection{}
	for _, o := range objs {
		sel.Refs = append(sel.Refs, refOf(o))
	}
	inv, err := inventory.Read(ctx, s.Cluster.RESTConfig(), sel)
	if err != nil {
		return inv, fmt.Errorf("inventory on %s: %w", s.Name, err)
	}
	return inv, nil
}

// captureColdOracle keeps the oracle's cold-deploy inventory: greenfield
// compares the engine's fresh apply with it.
func (r *Run) captureColdOracle(ctx context.Context) error {
	inv, err := readObjects(ctx, r.Oracle, r.onSide(r.Oracle, r.Objects))
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.coldOracle = &inv
	r.coldObjects = append([]Object(nil), r.Objects...)
	return nil
}

// availability checks, where containers run, that each APIService among
// the estate's objects reports Available=True and that its group version
// answers discovery; elsewhere it records both as not run, with the reason.
// Its BREAK takes the backend away (the estate's Deployment behind the
// APIService's Service scaled to zero): both must fail. The backend is
// then scaled back and must serve again before the run goes on.
func (r *Run) availability(ctx context.Context, rec *Recorder, when string) {
	for _, o := range r.apiServices() {
		name := "APIService " + o.Ref.Name + " Available " + when
		answers := "its group version answers discovery " + when
		if !r.Substrate.ContainersRun {
			rec.NotRun(name, noContainers)
			rec.NotRun(answers, noContainers)
			continue
		}
		state, err := waitAvailable(ctx, r.Subject, o.Ref, true, apiServiceWait)
		if !rec.Check(name, err, state) {
			continue
		}
		path, n, err := r.discover(ctx, r.Subject, o.Ref, discoverySettle)
		if !rec.Check(answers, err, fmt.Sprintf("GET %s lists %d resources", path, n)) {
			continue
		}
		rec.Claim([]string{name, answers}, "APIService %s is served by a real pod: Available %s, and GET %s listed %d resources", o.Ref.Name, state, path, n)
		r.backendDownBreak(ctx, rec, o, name, answers)
	}
}

// noContainers is why the availability checks do not run on a substrate
// without a kubelet.
const noContainers = "needs the aggregated API's backend running: this substrate runs no containers (no kubelet), so use --substrate kind"

// apiServiceWait bounds each wait for an APIService to change state: the
// aggregator checks a backend every few seconds, and a fresh metrics-server
// took 21-27 s here.
const apiServiceWait = 3 * time.Minute

// apiServices are the estate's APIService objects.
func (r *Run) apiServices() []Object {
	var apis []Object
	for _, o := range r.Objects {
		if o.Ref.Kind == "APIService" && o.Ref.Group == "apiregistration.k8s.io" {
			apis = append(apis, o)
		}
	}
	return apis
}

// backendDownBreak scales the APIService's backend Deployment to zero on
// the subject, measures availability and discovery again, and puts the
// replicas back, waiting for the APIService to serve again. The checks are
// the subject cluster's alone, so the BREAK is not replayed on the oracle.
func (r *Run) backendDownBreak(ctx context.Context, rec *Recorder, api Object, checks ...string) {
	b := Breaking{Name: "backend_down", Victim: api.Ref.Name, Covers: checks,
		Predict: []result.Prediction{{Object: api.Ref.String(), Field: fieldAvailable, Got: "False"}, {Object: api.Ref.String(), Field: fieldDiscovery, Got: "server error"}}}
	backend, err := r.backend(ctx, r.Subject, api.Ref)
	if err == nil && backend == nil {
		err = fmt.Errorf("none of the estate's Deployments backs APIService %s", api.Ref.Name)
	}
	if err != nil {
		b.Corruption = "scales the APIService's backend to 0 replicas"
		r.breakSubject(ctx, rec, b, func(context.Context, *Side) (Measured, error) { return nil, err })
		return
	}
	b.Corruption = "scales " + backend.Ref.String() + ", the APIService's backend, to 0 replicas"
	r.breakSubject(ctx, rec, b, func(ctx context.Context, sd *Side) (Measured, error) {
		u, err := sd.Get(ctx, backend.Ref)
		if err != nil || u == nil {
			return nil, fmt.Errorf("read %s: %v", backend.Ref, cmpErr(err, "not found"))
		}
		replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		scale := func(n int64) error {
			return sd.Patch(ctx, backend.Ref, fmt.Sprintf(`[{"op":"add","path":"/spec/replicas","value":%d}]`, n))
		}
		if err := corrupt(ctx, func() error { return scale(0) }); err != nil {
			return nil, err
		}
		m := Measured{}
		// The aggregator notices a missing backend within seconds; a check
		// still passing after the bound has held. A sabotaged run waits the
		// same bound: one measurement path, only the corruption skipped.
		_, m[checks[0]] = waitAvailable(ctx, sd, api.Ref, false, apiServiceWait)
		if m[checks[0]] == nil {
			_, m[checks[0]] = apiServiceState(ctx, sd, api.Ref)
		} else {
			m[checks[0]] = nil
		}
		if len(checks) > 1 {
			_, _, m[checks[1]] = r.discover(ctx, sd, api.Ref, 0)
		}
		return undoing(m, nil, func() error {
			if err := scale(replicas); err != nil {
				return err
			}
			_, err := waitAvailable(ctx, sd, api.Ref, true, apiServiceWait)
			return err
		})
	})
}

func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// apiServiceState reads an APIService's Available condition: "True
// (Passed)" and nil, or the state and an error saying why it is not
// available.
func apiServiceState(ctx context.Context, sd *Side, ref estate.Object) (string, error) {
	u, err := sd.Get(ctx, ref)
	if err != nil {
		return "", err // a measurement error (Side.Get)
	}
	if !exists(u) {
		return "", &result.Finding{Object: ref.String(), Field: fieldExists, Want: present, Got: absent}
	}
	state, ok := availability(u)
	if ok {
		return state, nil
	}
	return state, &result.Finding{Object: ref.String(), Field: fieldAvailable, Want: "True", Got: availableStatus(state), Detail: state}
}

// fieldAvailable is an APIService's Available condition's status:
// "True", "False", or "none" before it has one.
const fieldAvailable = "Available"

// availableStatus is the status word of an availability state.
func availableStatus(state string) string {
	if w, _, _ := strings.Cut(state, " "); w == "True" || w == "False" || w == "Unknown" {
		return w
	}
	return "none"
}

// availability reads an APIService's Available condition: "True
// (Passed)", "False (FailedDiscoveryCheck)", or that it has none yet.
func availability(u *unstructured.Unstructured) (state string, ok bool) {
	state = "no Available condition yet"
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Available" {
			state = fmt.Sprintf("%v (%v)", m["status"], m["reason"])
			if m["status"] == "True" {
				return state, true
			}
		}
	}
	return state, false
}

// waitAvailable polls until the APIService's availability is want, and
// returns the state it reached (with how long it took).
func waitAvailable(ctx context.Context, sd *Side, ref estate.Object, want bool, bound time.Duration) (string, error) {
	start := time.Now()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		state, err := apiServiceState(ctx, sd, ref)
		if (err == nil) == want && state != "" {
			return fmt.Sprintf("%s on %s after %s", state, sd.Name, time.Since(start).Round(time.Second)), nil
		}
		select {
		case <-ctx.Done():
			if state == "" {
				// The last read failed or found no object: that is what
				// the wait measured.
				return "", err
			}
			if parent.Err() != nil {
				return "", measure(sd, "wait for "+ref.String(), parent.Err())
			}
			// Read, and never the wanted state within the bound: a
			// finding about the APIService, not a timeout of gauntlet's.
			return "", &result.Finding{Object: ref.String(), Field: fieldAvailable, Want: availableWord(want), Got: availableStatus(state),
				Detail: fmt.Sprintf("still %s on %s after %s", state, sd.Name, bound)}
		case <-time.After(time.Second):
		}
	}
}

func availableWord(want bool) string {
	if want {
		return "True"
	}
	return "False"
}

// discoverySettle bounds how long the discovery check asks again after a
// server error: a backend just rolled out can be Available while the
// aggregator's requests to it still come back Unauthorized (seen on kind
// right after the reconverging apply, once for more than a minute).
const discoverySettle = 3 * time.Minute

// discover GETs the APIService's group version from the API server, as
// kubectl does, and counts the resources it lists. A server error is
// asked again every 2 s for up to settle (a BREAK's measurement passes 0:
// it asks once).
func (r *Run) discover(ctx context.Context, sd *Side, ref estate.Object, settle time.Duration) (string, int, error) {
	path, n, err := r.discoverRaw(ctx, sd, ref, settle)
	return path, n, discoveryFinding(sd, ref, path, err)
}

// fieldDiscovery is what a GET of an APIService's group version answered:
// "resources", "no resources", "server error" (5xx), "unauthorized" or
// the status code.
const fieldDiscovery = "discovery"

// discoveryFinding sorts a discovery error: an answer of the API server
// (a status, an empty list) is a finding about the APIService; a request
// that got no answer is a measurement error.
func discoveryFinding(sd *Side, ref estate.Object, path string, err error) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	var empty *emptyDiscovery
	switch {
	case errors.As(err, &empty):
		return &result.Finding{Object: ref.String(), Field: fieldDiscovery, Want: "resources", Got: "no resources", Detail: err.Error()}
	case errors.As(err, &st):
		got := fmt.Sprint(st.Status().Code)
		switch code := st.Status().Code; {
		case code >= 500:
			got = "server error"
		case code == 401:
			got = "unauthorized"
		}
		return &result.Finding{Object: ref.String(), Field: fieldDiscovery, Want: "resources", Got: got, Detail: "GET " + path + ": " + err.Error()}
	}
	return measure(sd, "GET "+path, err)
}

// emptyDiscovery is a discovery answer that lists no resources (or
// another group version).
type emptyDiscovery struct{ msg string }

func (e *emptyDiscovery) Error() string { return e.msg }

// discoverRaw is discover with the errors as the client returned them.
func (r *Run) discoverRaw(ctx context.Context, sd *Side, ref estate.Object, settle time.Duration) (string, int, error) {
	start := time.Now()
	for asked := 1; ; asked++ {
		path, n, err := r.discoverOnce(ctx, sd, ref)
		if err == nil || !transient(err) {
			return path, n, err
		}
		if time.Since(start) >= settle {
			if asked > 1 {
				err = fmt.Errorf("%w (asked %d times over %s)%s", err, asked, time.Since(start).Round(time.Second), r.backendLog(ctx, sd, ref))
			}
			return path, n, err
		}
		select {
		case <-ctx.Done():
			return path, n, err
		case <-time.After(2 * time.Second):
		}
	}
}

// transient says a discovery error is the server's (5xx) or an
// authentication the aggregator had not finished (401), not an answer.
func transient(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	code := st.Status().Code
	return code >= 500 || code == 401
}

func (r *Run) discoverOnce(ctx context.Context, sd *Side, ref estate.Object) (string, int, error) {
	u, err := sd.Get(ctx, ref)
	if err != nil || u == nil {
		return "", 0, fmt.Errorf("read %s: %v", ref, err)
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
	path := "/apis/" + group + "/" + version
	dc, err := discovery.NewDiscoveryClientForConfig(sd.Cluster.RESTConfig())
	if err != nil {
		return path, 0, err
	}
	raw, err := dc.RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return path, 0, fmt.Errorf("APIService %s: GET %s on %s: %w", ref.Name, path, sd.Name, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(raw, &list); err != nil {
		return path, 0, fmt.Errorf("GET %s on %s: %w", path, sd.Name, err)
	}
	if list.GroupVersion != group+"/"+version || len(list.APIResources) == 0 {
		return path, 0, &emptyDiscovery{fmt.Sprintf("APIService %s: GET %s on %s answered %q with %d resources", ref.Name, path, sd.Name, list.GroupVersion, len(list.APIResources))}
	}
	return path, len(list.APIResources), nil
}

// backend finds the estate's Deployment that serves an APIService: the
// one whose pod labels carry the selector of the APIService's Service.
func (r *Run) backend(ctx context.Context, sd *Side, api estate.Object) (*Object, error) {
	u, err := sd.Get(ctx, api)
	if err != nil || u == nil {
		return nil, fmt.Errorf("read %s: %v", api, err)
	}
	ns, _, _ := unstructured.NestedString(u.Object, "spec", "service", "namespace")
	name, _, _ := unstructured.NestedString(u.Object, "spec", "service", "name")
	if name == "" {
		return nil, nil // served by the API server itself
	}
	svc, err := sd.Get(ctx, estate.Object{Version: "v1", Kind: "Service", Namespace: ns, Name: name})
	if err != nil || svc == nil {
		return nil, fmt.Errorf("read Service %s/%s: %v", ns, name, err)
	}
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	if len(sel) == 0 {
		return nil, nil
	}
	for _, o := range r.Objects {
		if o.Ref.Kind != "Deployment" || o.Ref.Namespace != ns {
			continue
		}
		d, err := sd.Get(ctx, o.Ref)
		if err != nil || d == nil {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
		match := true
		for k, v := range sel {
			if labels[k] != v {
				match = false
			}
		}
		if match {
			o := o
			return &o, nil
		}
	}
	return nil, nil
}

// backendLog is the end of the log of each pod behind an APIService, for
// the detail of a check that failed on it ("" when there is none).
func (r *Run) backendLog(ctx context.Context, sd *Side, api estate.Object) string {
	backend, err := r.backend(ctx, sd, api)
	if err != nil || backend == nil {
		return ""
	}
	cs, err := sd.Typed()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	d, err := cs.AppsV1().Deployments(backend.Ref.Namespace).Get(ctx, backend.Ref.Name, metav1.GetOptions{})
	if err != nil || d.Spec.Selector == nil {
		return ""
	}
	pods, err := cs.CoreV1().Pods(backend.Ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
	if err != nil {
		return ""
	}
	tail := int64(8)
	var b strings.Builder
	for _, p := range pods.Items {
		raw, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "; pod %s (%s) log ends: %s", p.Name, p.Status.Phase, strings.Join(strings.Fields(string(raw)), " "))
	}
	return b.String()
}

// sourceLine names the estate's source for a detail sentence.
func (r *Run) sourceLine() string {
	var parts []string
	roots := r.Spec.RootSpecs()
	for _, rs := range roots {
		src := rs.Source
		if src == nil {
			continue
		}
		what := src.Path
		if len(src.Files) > 0 {
			var names []string
			for _, f := range src.Files {
				names = append(names, f.Path)
			}
			what = strings.Join(names, ", ")
			if len(names) > 4 {
				what = fmt.Sprintf("%d files", len(names))
			}
			if src.Dir != "" {
				what += " under " + src.Dir
			}
		}
		line := fmt.Sprintf("%s's %s at %s", strings.TrimPrefix(src.Repository, "https://github.com/"), what, src.Commit[:10])
		if len(roots) > 1 {
			line = "root " + rs.Name + " (" + line + ")"
		}
		parts = append(parts, line)
	}
	if len(parts) == 0 {
		return "the reference root written here"
	}
	return strings.Join(parts, " then ")
}

// deltaLine names the deltas the subject's root carries.
func (r *Run) deltaLine() string {
	var names []string
	for _, d := range r.Subject.Root.Applied {
		names = append(names, d.Name+" ("+d.Why+")")
	}
	if len(names) == 0 {
		return "gauntlet's providers file and no delta"
	}
	return "gauntlet's providers file and its deltas: " + strings.Join(names, ", ")
}

// backupState copies a side's acted state aside - its local file, or its
// record in the cluster once the records live there - and returns a func
// that puts it back byte for byte, for BREAKs that corrupt state.
func backupState(ctx context.Context, s *Side) (func() error, error) {
	if s.live() && s.Records != nil {
		cs, err := s.Typed()
		if err != nil {
			return nil, err
		}
		restore, err := recordstore.Backup(ctx, cs, storeOf(s.Records))
		if err != nil {
			return nil, fmt.Errorf("back up state: %w", err)
		}
		return func() error { return restore(context.WithoutCancel(ctx)) }, nil
	}
	path := filepath.Join(s.Root.Dir, "terraform.tfstate")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("back up state: %w", err)
	}
	return func() error { return os.WriteFile(path, b, 0o644) }, nil
}

// estateObject converts an inventory ref back to an estate object.
func estateObject(r inventory.Ref) estate.Object {
	return estate.Object{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}
