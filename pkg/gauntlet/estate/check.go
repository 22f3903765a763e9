package estate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Check materialises every root of the estate into a folder below work
// and refuses, naming each, what would only fail once the clusters run: a
// file the configuration reads that the estate does not pin, a module
// source that needs the network, a provider the toolchain cannot supply
// (or whose version constraint excludes the pin and is not relaxed), and
// a required variable estate.yaml gives no value. It is the preflight's
// reading of the roots; it starts nothing. Notes are what it could not
// decide (references not resolvable statically), for the log.
func (s *Spec) Check(work string, m func(root string) Materials) (notes []string, err error) {
	var problems []string
	for _, rs := range s.RootSpecs() {
		mat := m(rs.Name)
		if mat.Kubeconfig == "" {
			kc, err := placeholderKubeconfig(work)
			if err != nil {
				return nil, err
			}
			mat.Kubeconfig = kc
		}
		r, err := s.Materialise(filepath.Join(work, "check-"+rs.Name), rs.Name, mat)
		if err != nil {
			return nil, err
		}
		tk, err := r.Taken()
		if err != nil {
			return nil, fmt.Errorf("estate %s: root %s: %w", s.Name, rs.Name, err)
		}
		say := func(what string) {
			if len(s.RootSpecs()) > 1 {
				what = "root " + rs.Name + ": " + what
			}
			problems = append(problems, what)
		}
		for _, ref := range tk.Missing {
			say("reads a file the estate does not pin: " + ref.String() + " (run `gauntlet estate new` again, which takes every file the root reads)")
		}
		for _, ref := range tk.Remote {
			say("calls a module the run cannot take offline: " + ref.String())
		}
		for _, n := range tk.ProviderNeeds(mat.supplied(), s.relaxFor(rs.Name)) {
			say(n.String())
		}
		var unset []string
		for _, v := range tk.Required {
			if _, ok := rs.Variables[v]; !ok {
				unset = append(unset, v)
			}
		}
		if len(unset) > 0 {
			say("the root requires variables with no default that estate.yaml does not set: " + strings.Join(unset, ", ") + " (add them under variables:)")
		}
		for _, ref := range tk.Unresolved {
			notes = append(notes, fmt.Sprintf("root %s: a reference gauntlet cannot resolve before plan (the file it reads must be among the pinned ones): %s", rs.Name, ref))
		}
	}
	if len(problems) > 0 {
		return notes, fmt.Errorf("estate %s cannot run as written:\n  - %s", s.Name, strings.Join(problems, "\n  - "))
	}
	return notes, nil
}

// placeholderKubeconfig is a kubeconfig that names no real cluster, for
// materialising a root that is only read.
func placeholderKubeconfig(work string) (string, error) {
	p := filepath.Join(work, "check.kubeconfig")
	const kc = `apiVersion: v1
kind: Config
clusters: [{name: check, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: check, user: {token: check}}]
contexts: [{name: check, context: {cluster: check, user: check}}]
current-context: check
`
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	return p, os.WriteFile(p, []byte(kc), 0o600)
}
