package stage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/inventory"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// resource resolves an object's kind to its API resource on this side.
func (s *Side) resource(o estate.Object) (dynamic.ResourceInterface, error) {
	m, err := s.mapping(o)
	if err != nil {
		return nil, err
	}
	ri := s.Dynamic.Resource(m.Resource)
	if o.Namespace != "" {
		return ri.Namespace(o.Namespace), nil
	}
	return ri, nil
}

// mapping resolves an object's kind on this side. Discovery is cached, so a
// kind not found is looked up again once with the cache dropped: the
// estate may have installed its CRD since (a custom resource of it), or
// deleted it.
func (s *Side) mapping(o estate.Object) (*meta.RESTMapping, error) {
	gk := schema.GroupKind{Group: o.Group, Kind: o.Kind}
	m, err := s.Mapper.RESTMapping(gk, o.Version)
	if meta.IsNoMatchError(err) {
		if r, ok := s.Mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
			m, err = s.Mapper.RESTMapping(gk, o.Version)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	return m, nil
}

// Get reads an object; a missing one is (nil, nil), and so is one whose
// kind the server no longer serves (a custom resource after its CRD went).
func (s *Side) Get(ctx context.Context, o estate.Object) (*unstructured.Unstructured, error) {
	ri, err := s.resource(o)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, measure(s, "map "+o.String(), err)
	}
	u, err := ri.Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		// A read that failed is never a finding about the object, however
		// the error names it (result.MeasurementError).
		return nil, measure(s, "get "+o.String(), err)
	}
	return u, nil
}

// Patch applies a patch out of band, as a person with kubectl would: a JSON
// patch ("[...]") or a JSON merge patch ("{...}").
func (s *Side) Patch(ctx context.Context, o estate.Object, patch string) error {
	ri, err := s.resource(o)
	if err != nil {
		return err
	}
	pt := types.JSONPatchType
	if strings.HasPrefix(strings.TrimSpace(patch), "{") {
		pt = types.MergePatchType
	}
	if _, err := ri.Patch(ctx, o.Name, pt, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch %s on %s: %w", o, s.Name, err)
	}
	return nil
}

// deleteWait bounds how long Delete waits for an object to go when the
// side sets no bound of its own (Side.DeleteWait).
const deleteWait = 2 * time.Minute

// Delete deletes an object out of band - a BREAK's corruption, or an undo
// clearing up - and waits until it is gone (a missing one is fine). A
// delete only marks an object with finalizers (a Namespace, a custom
// resource a controller guards): a measurement straight after would read
// it Terminating, and a create of the same name would be refused. One
// still there when the bound runs out is an error naming it and what
// holds it: the stage could not do its part, never a check's finding.
func (s *Side) Delete(ctx context.Context, o estate.Object) error {
	bound := s.DeleteWait
	if bound <= 0 {
		bound = deleteWait
	}
	return s.deleteAndWait(ctx, o, bound)
}

// deleteAndWait deletes an object and waits, within bound, until it is
// gone.
func (s *Side) deleteAndWait(ctx context.Context, o estate.Object, bound time.Duration) error {
	ri, err := s.resource(o)
	if err != nil {
		return err
	}
	// The object deleted is this one, by uid: a controller that makes it
	// again at once (a namespace's kube-root-ca.crt) makes another.
	var uid types.UID
	if u, err := s.Get(ctx, o); err == nil && u != nil {
		uid = u.GetUID()
	}
	if err := ri.Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s on %s: %w", o, s.Name, err)
	}
	if err := s.waitGone(ctx, o, uid, bound); err != nil {
		return fmt.Errorf("delete %s on %s: %w", o, s.Name, err)
	}
	return nil
}

// waitGone waits, within bound, until an object is gone - absent, or
// there under another uid than uid (made again by its controller) - and
// says what keeps it when it does not go.
func (s *Side) waitGone(ctx context.Context, o estate.Object, uid types.UID, bound time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		u, err := s.Get(wctx, o)
		if err == nil && (u == nil || (uid != "" && u.GetUID() != uid)) {
			return nil
		}
		select {
		case <-wctx.Done():
			waited := "after " + bound.String()
			if ctx.Err() != nil {
				waited = "when the run was cancelled"
			}
			if err != nil {
				return fmt.Errorf("still there %s, the last read failed: %w", waited, err)
			}
			return fmt.Errorf("still there %s: %s", waited, lingering(u))
		case <-time.After(deletePoll(bound)):
		}
	}
}

// deletePoll is how often waitGone reads the object again.
func deletePoll(bound time.Duration) time.Duration { return min(500*time.Millisecond, bound/4) }

// lingering says why an object is still there after a delete: its
// finalizers (a Namespace's own in spec.finalizers too, and the
// conditions its controller reports), or that it is not even marked.
func lingering(u *unstructured.Unstructured) string {
	if u.GetDeletionTimestamp() == nil {
		return "not marked for deletion"
	}
	fins := u.GetFinalizers()
	spec, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "finalizers")
	fins = append(fins, spec...)
	held := "no finalizers left"
	if len(fins) > 0 {
		held = "finalizers " + strings.Join(fins, ", ")
	}
	out := fmt.Sprintf("terminating since %s, %s", u.GetDeletionTimestamp().UTC().Format(time.RFC3339), held)
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "True" && m["message"] != nil {
			out += fmt.Sprintf("; %v: %v", m["type"], m["message"])
		}
	}
	return out
}

// exists says an object read is there: read, and not on its way out. A
// terminating object is absent to every "is it there?" - the world key
// alone (Run.keyOf) tells it apart.
func exists(u *unstructured.Unstructured) bool {
	return u != nil && u.GetDeletionTimestamp() == nil
}

// Missing returns the objects of objs that do not exist on this side
// (a terminating one does not).
func (s *Side) Missing(ctx context.Context, objs []Object) ([]Object, error) {
	var out []Object
	for _, o := range objs {
		u, err := s.Get(ctx, o.Ref)
		if err != nil {
			return nil, err
		}
		if !exists(u) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Present returns the objects of objs that still exist on this side
// (a terminating one does not).
func (s *Side) Present(ctx context.Context, objs []Object) ([]Object, error) {
	var out []Object
	for _, o := range objs {
		u, err := s.Get(ctx, o.Ref)
		if err != nil {
			return nil, err
		}
		if exists(u) {
			out = append(out, o)
		}
	}
	return out, nil
}

// field reads a dotted path with [i] indexes from an object, as a string.
func field(u *unstructured.Unstructured, path string) (string, error) {
	var cur any = u.Object
	for _, part := range splitField(path) {
		switch p := part.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return "", fmt.Errorf("%s: %q is not a map", path, p)
			}
			cur = m[p]
		case int:
			l, ok := cur.([]any)
			if !ok || p >= len(l) {
				return "", fmt.Errorf("%s: no index %d", path, p)
			}
			cur = l[p]
		}
	}
	if cur == nil {
		return "", fmt.Errorf("%s: not set", path)
	}
	return fmt.Sprint(cur), nil
}

// splitField splits "a.b[1].c" into "a", "b", 1, "c", and a["x.y"] into
// "a", "x.y".
func splitField(path string) []any {
	var out []any
	cur := ""
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
		case '[':
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			if i+1 < len(path) && path[i+1] == '"' {
				// A quoted key: metadata.labels["app.kubernetes.io/name"].
				end := strings.Index(path[i+2:], `"]`)
				if end < 0 {
					end = len(path) - i - 2
				}
				out = append(out, path[i+2:i+2+end])
				i += end + 3
				continue
			}
			j := i + 1
			n := 0
			for ; j < len(path) && path[j] != ']'; j++ {
				n = n*10 + int(path[j]-'0')
			}
			out = append(out, n)
			i = j
		default:
			cur += string(c)
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// Recreate creates an object again from a copy read earlier (a BREAK
// putting back what it deleted), without the server-set fields.
func (s *Side) Recreate(ctx context.Context, o estate.Object, from *unstructured.Unstructured) error {
	ri, err := s.resource(o)
	if err != nil {
		return err
	}
	u := from.DeepCopy()
	for _, f := range [][]string{{"metadata", "resourceVersion"}, {"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"metadata", "managedFields"}, {"metadata", "generation"}, {"status"}} {
		unstructured.RemoveNestedField(u.Object, f...)
	}
	_, err = ri.Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// A terminating one is on its way out, not put back: wait until it
		// is gone and create it again.
		old, gerr := s.Get(ctx, o)
		if gerr != nil {
			return fmt.Errorf("recreate %s on %s: %w", o, s.Name, gerr)
		}
		if old == nil || exists(old) {
			return nil // never deleted (a sabotaged BREAK), or put back already
		}
		bound := s.DeleteWait
		if bound <= 0 {
			bound = deleteWait
		}
		if err := s.waitGone(ctx, o, old.GetUID(), bound); err != nil {
			return fmt.Errorf("recreate %s on %s: the one terminating is %w", o, s.Name, err)
		}
		_, err = ri.Create(ctx, u, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("recreate %s on %s: %w", o, s.Name, err)
	}
	if o.Group == "" && o.Kind == "ServiceAccount" && s.Cluster != nil && s.Cluster.Capabilities().ContainersRun {
		return s.restartPodsOf(ctx, o.Namespace, o.Name)
	}
	return nil
}

// apiServicesAvailable waits until every APIService says Available: an
// aggregated API whose backend just restarted flips its status back a few
// seconds after the pods are Ready, and that write must not fall inside
// the next stage's measurement.
func (s *Side) apiServicesAvailable(ctx context.Context) error {
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	down := "not listed yet"
	for {
		list, err := s.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err == nil {
			down = ""
			for _, u := range list.Items {
				if state, ok := availability(&u); !ok {
					down = fmt.Sprintf("%s is Available=%s", u.GetName(), state)
				}
			}
			if down == "" {
				return nil
			}
		} else {
			down = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("APIServices on %s not all Available after a ServiceAccount's pods restarted (%s): %w", s.Name, down, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// restartPodsOf deletes the running pods of a ServiceAccount that was
// just created again and waits until as many are Ready in their place.
// The account has a new uid, so the API server refuses every token the
// old pods hold: left alone, a metrics-server on kind answered every
// discovery request "Unauthorized" for good after a BREAK put its
// account back.
func (s *Side) restartPodsOf(ctx context.Context, namespace, account string) error {
	cs, err := s.Typed()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	// Only the account's pods: the namespace may hold many others.
	ofAccount := metav1.ListOptions{FieldSelector: "spec.serviceAccountName=" + account}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, ofAccount)
	if err != nil {
		return fmt.Errorf("list pods of ServiceAccount %s/%s on %s: %w", namespace, account, s.Name, err)
	}
	old := map[types.UID]bool{}
	for _, p := range pods.Items {
		if p.Spec.ServiceAccountName != account || p.DeletionTimestamp != nil {
			continue
		}
		if err := cs.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("restart pod %s/%s on %s: %w", namespace, p.Name, s.Name, err)
		}
		old[p.UID] = true
	}
	for len(old) > 0 {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, ofAccount)
		if err == nil {
			ready, stale := 0, 0
			for _, p := range pods.Items {
				if p.Spec.ServiceAccountName != account {
					continue
				}
				if old[p.UID] {
					stale++
					continue
				}
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
						ready++
					}
				}
			}
			if stale == 0 && ready >= len(old) {
				return s.apiServicesAvailable(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods of ServiceAccount %s/%s on %s not Ready again after it was created again: %w", namespace, account, s.Name, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
	return nil
}

// objVersion is one object as versions reads it; the zero value is an
// object that is not there.
type objVersion struct {
	Present                       bool
	UID, ResourceVersion, Content string
}

func (v objVersion) String() string {
	if !v.Present {
		return absent
	}
	return "uid " + v.UID + " resourceVersion " + v.ResourceVersion + " content " + v.Content
}

// statusWrite reports whether after differs from v by the resourceVersion
// alone - same uid, same content: a controller wrote its status (a CRD's
// conditions, a recreated Deployment's rollout), the estate's engine
// touched nothing.
func (v objVersion) statusWrite(after objVersion) bool {
	return v.Present && after.Present && v.UID == after.UID && v.Content == after.Content
}

// objVersions are objects' versions, keyed by object.
type objVersions map[string]objVersion

// versions reads each object's uid, resourceVersion and content digest,
// keyed by object: an apply that promises to touch nothing leaves them as
// they were.
func versions(ctx context.Context, s *Side, objs []Object) (objVersions, error) {
	out := objVersions{}
	for _, o := range objs {
		u, err := s.Get(ctx, o.Ref)
		if err != nil {
			return nil, measure(s, "read "+o.Ref.String(), err)
		}
		if u == nil {
			out[o.Ref.String()] = objVersion{}
			continue
		}
		out[o.Ref.String()] = objVersion{Present: true, UID: string(u.GetUID()), ResourceVersion: u.GetResourceVersion(), Content: contentDigest(u)}
	}
	return out, nil
}

// contentDigest is a short digest of what an engine could change in u:
// the object as it is compared (inventory.Normalize on one cluster: no
// status, no versions, no field a controller writes) and the
// managedFields entries of everyone but the control plane's own
// controllers and status writers - so an engine that only takes over
// fields still moves it. A resourceVersion that moved with the content
// unchanged is a controller's status write, not a touch.
func contentDigest(u *unstructured.Unstructured) string {
	n := inventory.Normalize(u, inventory.SameCluster())
	var mf []metav1.ManagedFieldsEntry
	for _, e := range u.GetManagedFields() {
		if e.Subresource == "status" || strings.HasPrefix(e.Manager, "kube-") {
			continue
		}
		mf = append(mf, e)
	}
	b, _ := json.Marshal([]any{n.Object, mf})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4])
}

// sameVersions names every object whose uid or resourceVersion moved.
func sameVersions(before, after objVersions) error { return versionFindings(before, after) }
