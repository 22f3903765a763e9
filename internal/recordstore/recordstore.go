// Package recordstore reads and checks the records a Terraform-compatible
// engine keeps in the cluster with the `kubernetes` backend: per workspace,
// one Secret tfstate-<workspace>-<secret_suffix> holding the gzipped state
// under the key "tfstate", and one Lease lock-<that Secret's name> whose
// holder is the lock's ID while a command holds it (the Lease outlives the
// lock; unlocking clears the holder). Both stock engines lay it out so.
//
// Reads return what is there; the checks (Manages, Follows, Released,
// Unchanged) compare it with what should be and return an error naming
// the record and the field at fault, so a BREAK that corrupts a record can
// see its victim named.
package recordstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Store names one workspace's records on the kubernetes backend, as the
// backend block configures them.
type Store struct {
	// Namespace holds the records (the backend's `namespace`, default "default").
	Namespace string
	// Suffix is the backend's `secret_suffix`.
	Suffix string
	// Workspace is the engine's workspace; empty means "default".
	Workspace string
}

// SecretName is the state Secret's name.
func (s Store) SecretName() string {
	ws := s.Workspace
	if ws == "" {
		ws = "default"
	}
	return "tfstate-" + ws + "-" + s.Suffix
}

// LeaseName is the lock Lease's name.
func (s Store) LeaseName() string { return "lock-" + s.SecretName() }

func (s Store) String() string { return "Secret " + s.Namespace + "/" + s.SecretName() }

// Record is the state one Secret holds.
type Record struct {
	Serial  int64
	Lineage string
	// Managed are the addresses the state holds, as `state list` prints
	// them (module path, data. for data sources, [index] keys), sorted.
	Managed []string
	// UID and ResourceVersion are the Secret's.
	UID, ResourceVersion string
}

// ErrNoRecord is returned (wrapped, naming the Secret) when the state
// Secret does not exist or holds no state.
var ErrNoRecord = errors.New("no state record")

// Read reads and decodes the state Secret.
func Read(ctx context.Context, cs kubernetes.Interface, s Store) (*Record, error) {
	sec, err := cs.CoreV1().Secrets(s.Namespace).Get(ctx, s.SecretName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s: %w", s, ErrNoRecord)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s, err)
	}
	raw, ok := sec.Data["tfstate"]
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf("%s has no tfstate key: %w", s, ErrNoRecord)
	}
	state, err := gunzip(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: the tfstate key does not decode (gzip): %w", s, err)
	}
	rec, err := decode(state)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	rec.UID, rec.ResourceVersion = string(sec.UID), sec.ResourceVersion
	return rec, nil
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// stateV4 is the part of the state format (version 4) the checks read.
type stateV4 struct {
	Version   int    `json:"version"`
	Serial    int64  `json:"serial"`
	Lineage   string `json:"lineage"`
	Resources []struct {
		Module    string `json:"module"`
		Mode      string `json:"mode"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			IndexKey any `json:"index_key"`
		} `json:"instances"`
	} `json:"resources"`
}

// Decode reads a state file's bytes (JSON, format version 4), as a local
// state file holds them.
func Decode(b []byte) (*Record, error) { return decode(b) }

func decode(b []byte) (*Record, error) {
	var st stateV4
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the state is not JSON: %w", err)
	}
	if st.Version != 4 {
		return nil, fmt.Errorf("state format version %d, want 4", st.Version)
	}
	rec := &Record{Serial: st.Serial, Lineage: st.Lineage}
	for _, r := range st.Resources {
		base := r.Type + "." + r.Name
		if r.Mode == "data" {
			base = "data." + base
		}
		if r.Module != "" {
			base = r.Module + "." + base
		}
		for _, in := range r.Instances {
			switch k := in.IndexKey.(type) {
			case nil:
				rec.Managed = append(rec.Managed, base)
			case float64:
				rec.Managed = append(rec.Managed, fmt.Sprintf("%s[%d]", base, int64(k)))
			case string:
				rec.Managed = append(rec.Managed, fmt.Sprintf("%s[%q]", base, k))
			default:
				return nil, fmt.Errorf("%s: index key %v of type %T", base, k, k)
			}
		}
	}
	sort.Strings(rec.Managed)
	return rec, nil
}

// Manages checks that the record names exactly the addresses the engine
// says it manages (e.g. its `state list`), naming each one that differs.
func Manages(s Store, rec *Record, engine []string) error {
	want := append([]string(nil), engine...)
	sort.Strings(want)
	var missing, extra []string
	i, j := 0, 0
	for i < len(rec.Managed) || j < len(want) {
		switch {
		case j == len(want) || i < len(rec.Managed) && rec.Managed[i] < want[j]:
			extra = append(extra, rec.Managed[i])
			i++
		case i == len(rec.Managed) || want[j] < rec.Managed[i]:
			missing = append(missing, want[j])
			j++
		default:
			i++
			j++
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "lacks "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "holds "+strings.Join(extra, ", ")+" the engine does not list")
	}
	if len(parts) > 0 {
		return fmt.Errorf("%s (serial %d) %s", s, rec.Serial, strings.Join(parts, "; "))
	}
	return nil
}

// Follows checks that after is a later state of the same history as
// before: the lineage never changes and the serial never goes down.
func Follows(s Store, before, after *Record) error {
	if after.Lineage != before.Lineage {
		return fmt.Errorf("%s: lineage changed from %s to %s", s, before.Lineage, after.Lineage)
	}
	if after.Serial < before.Serial {
		return fmt.Errorf("%s: serial went back from %d to %d", s, before.Serial, after.Serial)
	}
	return nil
}

// Lock is the lock Lease's state.
type Lock struct {
	// Exists is false before any command took the lock.
	Exists bool
	// Holder is the lock ID while the lock is held, else empty.
	Holder string
	// Operation and Who come from the lock info the holder wrote.
	Operation, Who  string
	ResourceVersion string
}

// ReadLock reads the lock Lease.
func ReadLock(ctx context.Context, cs kubernetes.Interface, s Store) (*Lock, error) {
	l, err := cs.CoordinationV1().Leases(s.Namespace).Get(ctx, s.LeaseName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Lease %s/%s: %w", s.Namespace, s.LeaseName(), err)
	}
	lk := &Lock{Exists: true, ResourceVersion: l.ResourceVersion}
	if l.Spec.HolderIdentity != nil {
		lk.Holder = *l.Spec.HolderIdentity
	}
	var info struct{ Operation, Who string }
	if raw := l.Annotations[LockInfoAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &info); err != nil {
			return nil, fmt.Errorf("Lease %s/%s: lock info does not decode: %w", s.Namespace, s.LeaseName(), err)
		}
	}
	lk.Operation, lk.Who = info.Operation, info.Who
	return lk, nil
}

// LockInfoAnnotation is where the backend writes the holder's lock info.
const LockInfoAnnotation = "app.terraform.io/lock-info"

// Released checks that no command holds the lock, naming the holder.
func Released(s Store, lk *Lock) error {
	if lk.Holder != "" {
		return fmt.Errorf("Lease %s/%s is still held by lock %s (%s by %s)", s.Namespace, s.LeaseName(), lk.Holder, lk.Operation, lk.Who)
	}
	return nil
}

// Snapshot is every Secret and Lease in a namespace, by "Kind/name", with
// its resourceVersion.
type Snapshot map[string]string

// Take snapshots a namespace's Secrets and Leases.
func Take(ctx context.Context, cs kubernetes.Interface, namespace string) (Snapshot, error) {
	snap := Snapshot{}
	secrets, err := cs.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Secrets in %s: %w", namespace, err)
	}
	for _, s := range secrets.Items {
		snap["Secret/"+s.Name] = s.ResourceVersion
	}
	leases, err := cs.CoordinationV1().Leases(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Leases in %s: %w", namespace, err)
	}
	for _, l := range leases.Items {
		snap["Lease/"+l.Name] = l.ResourceVersion
	}
	return snap, nil
}

// Unchanged checks that after has the same objects as before, each at the
// same resourceVersion, naming every one that appeared, went or changed.
// only, when given, limits the comparison to keys with that prefix
// ("Secret/": the records, leaving the lock Leases a plan takes aside).
func Unchanged(namespace string, before, after Snapshot, only string) error {
	var diffs []string
	for k, v := range before {
		if !strings.HasPrefix(k, only) {
			continue
		}
		switch w, ok := after[k]; {
		case !ok:
			diffs = append(diffs, k+" went")
		case w != v:
			diffs = append(diffs, fmt.Sprintf("%s changed (resourceVersion %s -> %s)", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && strings.HasPrefix(k, only) {
			diffs = append(diffs, k+" appeared")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("namespace %s: %s", namespace, strings.Join(diffs, "; "))
	}
	return nil
}

// Rewrite changes the state the Secret holds behind the engine's back:
// f edits the decoded state (JSON object), which is written back gzipped.
// It returns a func that puts the Secret's original bytes back. BREAKs use
// it to corrupt a record; stages use it to set a state aside.
func Rewrite(ctx context.Context, cs kubernetes.Interface, s Store, f func(state map[string]any) error) (restore func(context.Context) error, err error) {
	sec, err := cs.CoreV1().Secrets(s.Namespace).Get(ctx, s.SecretName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s, err)
	}
	orig := sec.Data["tfstate"]
	raw, err := gunzip(orig)
	if err != nil {
		return nil, fmt.Errorf("%s: the tfstate key does not decode (gzip): %w", s, err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: the state is not JSON: %w", s, err)
	}
	if err := f(st); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	changed, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(changed); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := PutRaw(ctx, cs, s, buf.Bytes()); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return PutRaw(ctx, cs, s, orig) }, nil
}

// Backup reads the state Secret's bytes and returns a func that writes
// them back unchanged, for BREAKs that corrupt state through the engine.
func Backup(ctx context.Context, cs kubernetes.Interface, s Store) (restore func(context.Context) error, err error) {
	return Rewrite(ctx, cs, s, func(map[string]any) error { return nil })
}

// ReadState returns the state the Secret holds, decoded as JSON: what a
// stage keeps to put a part of it back later (a root's outputs).
func ReadState(ctx context.Context, cs kubernetes.Interface, s Store) (map[string]any, error) {
	sec, err := cs.CoreV1().Secrets(s.Namespace).Get(ctx, s.SecretName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s, err)
	}
	raw, err := gunzip(sec.Data["tfstate"])
	if err != nil {
		return nil, fmt.Errorf("%s: the tfstate key does not decode (gzip): %w", s, err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: the state is not JSON: %w", s, err)
	}
	return st, nil
}

// Raw reads the state Secret's record as stored (gzipped).
func Raw(ctx context.Context, cs kubernetes.Interface, s Store) ([]byte, error) {
	sec, err := cs.CoreV1().Secrets(s.Namespace).Get(ctx, s.SecretName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s, err)
	}
	return sec.Data["tfstate"], nil
}

// PutRaw writes a record as stored into the state Secret, behind the
// engine's back.
func PutRaw(ctx context.Context, cs kubernetes.Interface, s Store, b []byte) error {
	sec, err := cs.CoreV1().Secrets(s.Namespace).Get(ctx, s.SecretName(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read %s: %w", s, err)
	}
	sec.Data["tfstate"] = b
	if _, err := cs.CoreV1().Secrets(s.Namespace).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("write %s: %w", s, err)
	}
	return nil
}

// SetHolder sets the lock Lease's holder and lock info, as the backend
// does when it locks ("" for both clears them, as it does when it
// unlocks), making the Lease if no command took the lock yet.
func SetHolder(ctx context.Context, cs kubernetes.Interface, s Store, holder, info string) error {
	leases := cs.CoordinationV1().Leases(s.Namespace)
	l, err := leases.Get(ctx, s.LeaseName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: s.LeaseName(), Namespace: s.Namespace}}, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("Lease %s/%s: %w", s.Namespace, s.LeaseName(), err)
	}
	if holder == "" {
		l.Spec.HolderIdentity = nil
		delete(l.Annotations, LockInfoAnnotation)
	} else {
		l.Spec.HolderIdentity = &holder
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		if info != "" {
			l.Annotations[LockInfoAnnotation] = info
		}
	}
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("Lease %s/%s: %w", s.Namespace, s.LeaseName(), err)
	}
	return nil
}
