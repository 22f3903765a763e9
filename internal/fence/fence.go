// Package fence makes a restricted identity on a cluster: a ServiceAccount
// that may plan one estate but not read another estate's records. Its
// RBAC is get/list/watch cluster-wide on every listable kind but Secrets
// and Leases (from discovery), every verb on the estate's own kinds, every
// verb on its own state Secret and lock Lease in its state namespace, and
// no Secret or Lease anywhere else: another estate's records are closed. Grant then hands it `get` on one named
// Secret (no list), and the func Grant returns takes that back.
//
// Everything it creates carries the label ManagedLabel and is removed by
// the cleanup func Create returns, which waits until it is gone.
package fence

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ManagedLabel marks every object the fence creates.
const ManagedLabel = "gauntlet.dev/fence"

// Spec describes the identity to make.
type Spec struct {
	// Name is the ServiceAccount's name ("app-planner"); it also names
	// the namespace gauntlet-fence-<Name> that holds it, and its roles.
	Name string
	// Own are the kinds the estate manages: every verb on them,
	// cluster-wide. Secrets and Leases are refused here (a cluster-wide
	// grant would open every other estate's records).
	Own []schema.GroupKind
	// State is the estate's own record: every verb on its Secret and lock
	// Lease, and create/list on Secrets and Leases in its namespace (the
	// backend creates them on first use and lists workspaces).
	State recordstore.Store
}

// Identity is a created identity.
type Identity struct {
	// Name is the ServiceAccount's name, Namespace its namespace.
	Name, Namespace string
	// User is the name the API server knows it by
	// ("system:serviceaccount:NS:NAME"), as a Forbidden error names it.
	User string
	// Config reaches the cluster as the identity: the admin config's
	// server and CA with the identity's token, and whatever wraps the
	// admin config's transport.
	Config *rest.Config

	admin kubernetes.Interface
	self  kubernetes.Interface
	// grants are the Roles Grant made and revoke has not removed, by
	// namespace/name.
	grants map[string]bool
}

// tokenLife bounds the token: long enough for a stage, short enough that
// a leaked file is soon worthless.
const tokenLife = time.Hour

// Create makes the identity on the cluster admin reaches and waits until
// the API server authorizes it as Spec says. The cleanup func removes
// everything it made (also after a failed Create, which calls it itself)
// and waits, bounded by its ctx, until it is gone.
func Create(ctx context.Context, admin *rest.Config, s Spec) (*Identity, func(context.Context) error, error) {
	if s.Name == "" || s.State.Namespace == "" || s.State.Suffix == "" {
		return nil, nil, errors.New("fence: a name and the identity's own state (namespace, suffix) are required")
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, nil, fmt.Errorf("fence %s: %w", s.Name, err)
	}
	id := &Identity{Name: s.Name, Namespace: "gauntlet-fence-" + s.Name, admin: cs, grants: map[string]bool{}}
	id.User = "system:serviceaccount:" + id.Namespace + ":" + id.Name
	cleanup := func(ctx context.Context) error { return id.remove(ctx, s.State.Namespace) }
	if err := id.create(ctx, admin, s); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return nil, nil, errors.Join(fmt.Errorf("fence %s: %w", s.Name, err), cleanup(cctx))
	}
	return id, cleanup, nil
}

func (id *Identity) create(ctx context.Context, admin *rest.Config, s Spec) error {
	read, err := readRules(admin)
	if err != nil {
		return err
	}
	own, err := ownRules(admin, s.Own)
	if err != nil {
		return err
	}
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{ManagedLabel: id.Name}}
	}
	if _, err := id.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta(id.Namespace, "")}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("namespace: %w", err)
	}
	if _, err := id.admin.CoreV1().ServiceAccounts(id.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta(id.Name, id.Namespace)}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("service account: %w", err)
	}
	rbac := id.admin.RbacV1()
	for suffix, rules := range map[string][]rbacv1.PolicyRule{"read": read, "own": own} {
		name := id.Namespace + "-" + suffix
		if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta(name, ""), Rules: rules}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("cluster role %s: %w", name, err)
		}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta(name, ""),
			RoleRef: roleRef("ClusterRole", name), Subjects: id.subjects()}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("cluster role binding %s: %w", name, err)
		}
	}
	st := s.State
	stateRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{st.SecretName()}, Verbs: []string{"*"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{st.LeaseName()}, Verbs: []string{"*"}},
		// create cannot be limited by name (the object has none yet when
		// authorized), and the backend lists its workspaces' Secrets.
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "list"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
	}
	name := id.Namespace + "-state"
	if _, err := rbac.Roles(st.Namespace).Create(ctx, &rbacv1.Role{ObjectMeta: meta(name, st.Namespace), Rules: stateRules}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("role %s/%s: %w", st.Namespace, name, err)
	}
	if _, err := rbac.RoleBindings(st.Namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta(name, st.Namespace),
		RoleRef: roleRef("Role", name), Subjects: id.subjects()}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("role binding %s/%s: %w", st.Namespace, name, err)
	}
	tr, err := id.admin.CoreV1().ServiceAccounts(id.Namespace).CreateToken(ctx, id.Name, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(tokenLife.Seconds()))}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token request: %w", err)
	}
	id.Config = rest.AnonymousClientConfig(admin)
	id.Config.BearerToken = tr.Status.Token
	// Whatever wraps the admin's requests (a run's oracle tape) wraps the
	// identity's too; a proxy started from Config must take it off.
	id.Config.WrapTransport = admin.WrapTransport
	if id.self, err = kubernetes.NewForConfig(id.Config); err != nil {
		return err
	}
	// RBAC is served from caches: wait until the server says yes to the
	// identity's own record before anyone plans as it.
	return id.waitAllowed(ctx, authzv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: st.Namespace, Name: st.SecretName()}, true)
}

func (id *Identity) subjects() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: "ServiceAccount", Name: id.Name, Namespace: id.Namespace}}
}

func roleRef(kind, name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: kind, Name: name}
}

func ptr[T any](v T) *T { return &v }

// readRules grants get/list/watch on every listable resource discovery
// shows but Secrets and Leases (the records and locks of every estate on
// the kubernetes backend: the state Role grants the identity its own). Groups whose discovery failed (an aggregated
// API with no backend) are left out: the identity cannot read them.
func readRules(admin *rest.Config) ([]rbacv1.PolicyRule, error) {
	byGroup, err := listable(admin)
	if err != nil {
		return nil, err
	}
	var rules []rbacv1.PolicyRule
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		var res []string
		for r := range byGroup[g] {
			if g == "" && r == "secrets" || g == "coordination.k8s.io" && r == "leases" {
				continue
			}
			res = append(res, r)
		}
		sort.Strings(res)
		if len(res) > 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: []string{"get", "list", "watch"}})
		}
	}
	return rules, nil
}

// served is every resource list discovery serves. A group whose
// discovery failed (an aggregated API that is down) is left out, not an
// error: the rest still describe the cluster.
func served(admin *rest.Config) ([]*metav1.APIResourceList, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(admin)
	if err != nil {
		return nil, err
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	return lists, nil
}

// ownRules grants every verb on the kinds, by the resource discovery
// names for each.
func ownRules(admin *rest.Config, kinds []schema.GroupKind) ([]rbacv1.PolicyRule, error) {
	lists, err := served(admin)
	if err != nil {
		return nil, err
	}
	var rules []rbacv1.PolicyRule
	for _, k := range kinds {
		if (k.Group == "" && k.Kind == "Secret") || (k.Group == "coordination.k8s.io" && k.Kind == "Lease") {
			return nil, fmt.Errorf("own kind %s: a cluster-wide grant on it would open other estates' records", k)
		}
		res := resourceFor(lists, k)
		if res == "" {
			return nil, fmt.Errorf("own kind %s: discovery serves no resource for it", k)
		}
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{k.Group}, Resources: []string{res, res + "/status"}, Verbs: []string{"*"}})
	}
	return rules, nil
}

func resourceFor(lists []*metav1.APIResourceList, k schema.GroupKind) string {
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || gv.Group != k.Group {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == k.Kind && !strings.Contains(r.Name, "/") {
				return r.Name
			}
		}
	}
	return ""
}

// listable is every resource discovery serves with the list verb, by
// group (subresources left out).
func listable(admin *rest.Config) (map[string]map[string]bool, error) {
	lists, err := served(admin)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			if out[gv.Group] == nil {
				out[gv.Group] = map[string]bool{}
			}
			out[gv.Group][r.Name] = true
		}
	}
	return out, nil
}

// GrantOption widens a Grant.
type GrantOption func(*grant)

type grant struct{ list bool }

// AlsoList adds `list` on the namespace's Secrets to a Grant: what stock
// terraform's kubernetes backend needs to read a state (it lists the
// namespace's Secrets first). Default: no list.
func AlsoList() GrantOption { return func(g *grant) { g.list = true } }

// Grant gives the identity `get` on exactly one Secret, by name (no list,
// no watch, unless AlsoList), and waits until the server authorizes it.
// revoke takes it back and waits until the server refuses it again;
// cleanup also removes a grant never revoked.
func (id *Identity) Grant(ctx context.Context, namespace, secret string, opts ...GrantOption) (revoke func(context.Context) error, err error) {
	var g grant
	for _, o := range opts {
		o(&g)
	}
	name := id.Namespace + "-get-" + secret
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{ManagedLabel: id.Name}}
	rbac := id.admin.RbacV1()
	key := namespace + "/" + name
	id.grants[key] = true
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}, Verbs: []string{"get"}}}
	if g.list {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}})
	}
	_, err = rbac.Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
	if err == nil {
		_, err = rbac.RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: roleRef("Role", name), Subjects: id.subjects()}, metav1.CreateOptions{})
	}
	attrs := authzv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: namespace, Name: secret}
	if err == nil {
		err = id.waitAllowed(ctx, attrs, true)
	}
	revoke = func(ctx context.Context) error {
		if err := id.deleteGrant(ctx, namespace, name); err != nil {
			return err
		}
		delete(id.grants, key)
		return id.waitAllowed(ctx, attrs, false)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("fence %s: grant get on Secret %s/%s: %w", id.Name, namespace, secret, err), revoke(ctx))
	}
	return revoke, nil
}

func (id *Identity) deleteGrant(ctx context.Context, namespace, name string) error {
	rbac := id.admin.RbacV1()
	err := errors.Join(
		ignoreNotFound(rbac.RoleBindings(namespace).Delete(ctx, name, metav1.DeleteOptions{})),
		ignoreNotFound(rbac.Roles(namespace).Delete(ctx, name, metav1.DeleteOptions{})))
	if err != nil {
		return fmt.Errorf("fence %s: revoke %s/%s: %w", id.Name, namespace, name, err)
	}
	return nil
}

// Can asks the API server, as the identity, whether it may do verb on
// resource (group "" unless given as resource.group) in namespace, by name
// when given.
func (id *Identity) Can(ctx context.Context, verb, resource, namespace, name string) (bool, error) {
	res, group, _ := strings.Cut(resource, ".")
	return id.allowed(ctx, authzv1.ResourceAttributes{Verb: verb, Resource: res, Group: group, Namespace: namespace, Name: name})
}

func (id *Identity) allowed(ctx context.Context, attrs authzv1.ResourceAttributes) (bool, error) {
	r, err := id.self.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
		&authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("access review as %s: %w", id.User, err)
	}
	return r.Status.Allowed, nil
}

// waitAllowed polls until the server's answer for attrs is want, bounded
// by ctx and by 30 s (RBAC caches catch up in well under a second).
func (id *Identity) waitAllowed(ctx context.Context, attrs authzv1.ResourceAttributes, want bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		got, err := id.allowed(ctx, attrs)
		if err == nil && got == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s may %s %s %s/%s: want %v, the server still says %v (%v): %w",
				id.User, attrs.Verb, attrs.Resource, attrs.Namespace, attrs.Name, want, got, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// remove deletes every object the fence made and waits until they are
// gone: the run's leftover checks must find nothing of it.
func (id *Identity) remove(ctx context.Context, stateNS string) error {
	rbac := id.admin.RbacV1()
	var errs []error
	for key := range id.grants {
		ns, name, _ := strings.Cut(key, "/")
		errs = append(errs, id.deleteGrant(ctx, ns, name))
	}
	name := id.Namespace + "-state"
	errs = append(errs,
		ignoreNotFound(rbac.RoleBindings(stateNS).Delete(ctx, name, metav1.DeleteOptions{})),
		ignoreNotFound(rbac.Roles(stateNS).Delete(ctx, name, metav1.DeleteOptions{})))
	for _, suffix := range []string{"read", "own"} {
		n := id.Namespace + "-" + suffix
		errs = append(errs,
			ignoreNotFound(rbac.ClusterRoleBindings().Delete(ctx, n, metav1.DeleteOptions{})),
			ignoreNotFound(rbac.ClusterRoles().Delete(ctx, n, metav1.DeleteOptions{})))
	}
	errs = append(errs, ignoreNotFound(id.admin.CoreV1().Namespaces().Delete(ctx, id.Namespace, metav1.DeleteOptions{})))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fence %s: cleanup: %w", id.Name, err)
	}
	// The namespace goes when its controller has emptied it.
	for {
		_, err := id.admin.CoreV1().Namespaces().Get(ctx, id.Namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fence %s: cleanup: namespace %s still there (%v): %w", id.Name, id.Namespace, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// WriteKubeconfig writes a kubeconfig reaching the cluster as the
// identity (server, CA, token) to path, mode 0600.
func (id *Identity) WriteKubeconfig(path string) error {
	c := id.Config
	ca := c.TLSClientConfig.CAData
	if len(ca) == 0 && c.TLSClientConfig.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(c.TLSClientConfig.CAFile); err != nil {
			return fmt.Errorf("fence %s: kubeconfig: %w", id.Name, err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[id.Name] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: ca,
		TLSServerName: c.TLSClientConfig.ServerName, InsecureSkipTLSVerify: c.TLSClientConfig.Insecure}
	cfg.AuthInfos[id.Name] = &clientcmdapi.AuthInfo{Token: c.BearerToken}
	cfg.Contexts[id.Name] = &clientcmdapi.Context{Cluster: id.Name, AuthInfo: id.Name}
	cfg.CurrentContext = id.Name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("fence %s: kubeconfig %s: %w", id.Name, path, err)
	}
	return os.Chmod(path, 0o600)
}

// Refused reads an engine's output for the API server refusing the
// identity a read of network's state, Secret namespace/secret, as the
// server words a Forbidden (the engine may wrap it over lines): a get of
// that Secret by name (`secrets "NAME" is forbidden: User "USER" cannot
// get ... in the namespace "NS"`), or a list of the namespace's Secrets
// (stock terraform's kubernetes backend lists them before it reads a
// state). It returns the refused verb; the error names the Secret.
func (id *Identity) Refused(output, namespace, secret string) (string, error) {
	out := strings.Join(strings.Fields(output), " ")
	user := `User "` + id.User + `"`
	in := `in API group "" in the namespace "` + namespace + `"`
	switch {
	case strings.Contains(out, `secrets "`+secret+`" is forbidden: `+user+` cannot get resource "secrets" `+in):
		return "get", nil
	case strings.Contains(out, `secrets is forbidden: `+user+` cannot list resource "secrets" `+in):
		return "list", nil
	}
	return "", fmt.Errorf("no refusal of %s reading Secret %s/%s (neither a get by name nor a list of the namespace's Secrets refused)", id.User, namespace, secret)
}
