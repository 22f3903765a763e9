package estate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
	"sigs.k8s.io/yaml"
)

// ClusterOverride is the override file that points a root's own cluster
// settings at the side's cluster: Terraform and OpenTofu merge
// *_override.tf files over the module they sit in, an attribute of a
// provider block replacing the root's (null unsetting it), a nested block
// replacing the root's blocks of its type, and a backend block replacing
// the root's whole.
const ClusterOverride = "gauntlet_cluster_override.tf"

// relaxOverride is the override file that carries a declared
// relax_providers entry: the required_providers entry of that name
// replaced by the pinned source and version.
const relaxOverride = "gauntlet_relax_override.tf"

// writeClusterOverrides writes ClusterOverride into every module folder
// whose kubernetes provider or backend block sets its own cluster, and
// records each as an applied delta. It returns whether the root module's
// own provider block was overridden.
func (r *Root) writeClusterOverrides(tk *Taken, kubeconfig string) (bool, error) {
	if len(tk.Cluster) == 0 {
		return false, nil
	}
	if kubeconfig == "" {
		return false, fmt.Errorf("the root sets its own cluster (%s) and the run has no kubeconfig to point it at", tk.Cluster[0])
	}
	byModule := map[string][]ClusterSetting{}
	for _, cs := range tk.Cluster {
		byModule[cs.Module] = append(byModule[cs.Module], cs)
	}
	rootOverridden := false
	for _, mod := range sortedModules(byModule) {
		var b strings.Builder
		b.WriteString("# Written by gauntlet: the root names its own cluster here; this run points it at\n# the side's cluster (" + kubeconfig + ") instead.\n")
		var said []string
		for _, cs := range byModule[mod] {
			said = append(said, cs.String())
			if cs.Backend() {
				writeBackendOverride(&b, cs, kubeconfig)
				continue
			}
			if mod == tk.Root {
				rootOverridden = true
			}
			b.WriteString("\nprovider \"kubernetes\" {\n")
			if cs.Alias != "" {
				fmt.Fprintf(&b, "  alias = %q\n", cs.Alias)
			}
			fmt.Fprintf(&b, "  config_path = %q\n", kubeconfig)
			for _, a := range cs.Attrs {
				if a != "config_path" {
					fmt.Fprintf(&b, "  %s = null\n", a)
				}
			}
			if cs.Exec {
				cred, err := writeExecCredential(kubeconfig)
				if err != nil {
					return false, fmt.Errorf("%s: %w", cs, err)
				}
				// A nested block cannot be unset by an override, only
				// replaced: this one hands over the side's own credentials.
				fmt.Fprintf(&b, "  exec {\n    api_version = \"client.authentication.k8s.io/v1beta1\"\n    command     = \"cat\"\n    args        = [%q]\n  }\n", cred)
			}
			b.WriteString("}\n")
		}
		p := filepath.Join(r.base(), filepath.FromSlash(mod), ClusterOverride)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return false, err
		}
		r.Applied = append(r.Applied, Delta{Name: "cluster-override", Why: strings.Join(said, "; ") +
			": " + ClusterOverride + " points it at the side's cluster"})
	}
	return rootOverridden, nil
}

// writeBackendOverride writes a backend "kubernetes" block that keeps the
// root's own arguments (its namespace, secret_suffix, labels) and reaches
// the side's cluster.
func writeBackendOverride(b *strings.Builder, cs ClusterSetting, kubeconfig string) {
	b.WriteString("\nterraform {\n  backend \"kubernetes\" {\n")
	names := make([]string, 0, len(cs.backendAttrs))
	for n := range cs.backendAttrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(b, "    %s = %s\n", n, cs.backendAttrs[n])
	}
	fmt.Fprintf(b, "    config_path = %q\n  }\n}\n", kubeconfig)
}

// writeExecCredential writes, beside the side's kubeconfig, the
// ExecCredential an exec block's `cat` prints: the kubeconfig's own
// token or client certificate.
func writeExecCredential(kubeconfig string) (string, error) {
	raw, err := os.ReadFile(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("read the side's kubeconfig for an exec credential: %w", err)
	}
	var kc struct {
		CurrentContext string `json:"current-context"`
		Contexts       []struct {
			Name    string `json:"name"`
			Context struct {
				User string `json:"user"`
			} `json:"context"`
		} `json:"contexts"`
		Users []struct {
			Name string `json:"name"`
			User struct {
				Token                 string `json:"token"`
				ClientCertificateData []byte `json:"client-certificate-data"`
				ClientKeyData         []byte `json:"client-key-data"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return "", fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	user := ""
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			user = c.Context.User
		}
	}
	status := map[string]string{}
	for _, u := range kc.Users {
		if u.Name != user {
			continue
		}
		if u.User.Token != "" {
			status["token"] = u.User.Token
		}
		if len(u.User.ClientCertificateData) > 0 {
			status["clientCertificateData"] = string(u.User.ClientCertificateData)
			status["clientKeyData"] = string(u.User.ClientKeyData)
		}
	}
	if len(status) == 0 {
		return "", fmt.Errorf("kubeconfig %s: its current user has no token or client certificate to hand over", kubeconfig)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": status})
	if err != nil {
		return "", err
	}
	p := kubeconfig + ".exec-credential.json"
	return p, os.WriteFile(p, b, 0o600)
}

// relaxFor is the relax_providers entries that apply to the named root.
func (s *Spec) relaxFor(root string) []RelaxProvider {
	var out []RelaxProvider
	for _, rp := range s.RelaxProviders {
		if rp.Root == "" || rp.Root == root {
			out = append(out, rp)
		}
	}
	return out
}

// writeRelaxOverrides carries each relax_providers entry into an
// override file beside every required_providers entry it matches, and
// refuses one that matches nothing, names a provider the toolchain does
// not pin, or relaxes a constraint the pin already meets.
func (r *Root) writeRelaxOverrides(tk *Taken, relax []RelaxProvider, pins []ProviderPin) error {
	files := map[string]map[string]ProviderPin{} // module -> local name -> pin
	for _, rp := range relax {
		matched := 0
		for _, u := range tk.Providers {
			if u.By != "required_providers" || u.Name != rp.Provider || u.Constraint != rp.Constraint {
				continue
			}
			pin, ok := pinFor(pins, u.source())
			if !ok {
				return fmt.Errorf("relax_providers %s %q: %s needs %s, which the toolchain does not pin (only a pinned provider's version may be relaxed)", rp.Provider, rp.Constraint, u.Pos, u.source())
			}
			if meets(pin.Version, rp.Constraint) {
				return fmt.Errorf("relax_providers %s %q: the pinned %s already meets it (%s): drop the relaxation", rp.Provider, rp.Constraint, pin.Version, u.Pos)
			}
			if files[u.Module] == nil {
				files[u.Module] = map[string]ProviderPin{}
			}
			files[u.Module][u.Name] = pin
			matched++
		}
		if matched == 0 {
			return fmt.Errorf("relax_providers %s %q: no required_providers entry of the root has that constraint: the pinned source moved", rp.Provider, rp.Constraint)
		}
		r.Applied = append(r.Applied, Delta{Name: "relax-" + rp.Provider + "-constraint", Why: fmt.Sprintf("the root requires %s %q, which excludes the pinned version; run on the pin (%s)", rp.Provider, rp.Constraint, rp.Why)})
	}
	for _, mod := range sortedModules(files) {
		var b strings.Builder
		b.WriteString("# Written by gauntlet: relax_providers in estate.yaml runs these providers at the\n# pinned version where the root's constraint excludes it.\nterraform {\n  required_providers {\n")
		names := make([]string, 0, len(files[mod]))
		for n := range files[mod] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := files[mod][n]
			fmt.Fprintf(&b, "    %s = {\n      source  = %q\n      version = %q\n    }\n", n, p.Source, p.Version)
		}
		b.WriteString("  }\n}\n")
		if err := os.WriteFile(filepath.Join(r.base(), filepath.FromSlash(mod), relaxOverride), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ProviderNeed is a provider need the toolchain cannot meet.
type ProviderNeed struct {
	Use ProviderUse
	// Why says what is missing.
	Why string
	// Relaxable: only the version constraint excludes a pinned provider,
	// which relax_providers in estate.yaml may relax.
	Relaxable bool
	// Also are the module's other blocks that need the same provider
	// ("resource \"aws_s3_bucket\" \"b\" at main.tf:19").
	Also []string
}

func (n ProviderNeed) String() string {
	also := ""
	if len(n.Also) > 0 {
		also = " (and " + strings.Join(n.Also, ", ") + ")"
	}
	return fmt.Sprintf("%s: %s%s needs %s: %s", n.Use.Pos, n.Use.By, also, n.Use.what(), n.Why)
}

// ProviderNeeds lists every provider need the pins do not meet: a
// provider the toolchain does not supply, or a version constraint its pin
// does not meet and relax does not relax. A resource type's provider is
// said once per module.
func (tk *Taken) ProviderNeeds(pins []ProviderPin, relax []RelaxProvider) []ProviderNeed {
	var out []ProviderNeed
	sources := map[string]map[string]string{} // module -> local name -> source
	for _, u := range tk.Providers {
		if u.By == "required_providers" && u.Source != "" {
			if sources[u.Module] == nil {
				sources[u.Module] = map[string]string{}
			}
			sources[u.Module][u.Name] = u.Source
		}
	}
	said := map[string]int{} // module and source -> index in out
	for _, u := range tk.Providers {
		if u.Source == "" {
			u.Source = sources[u.Module][u.Name]
		}
		src := u.source()
		pin, ok := pinFor(pins, src)
		if !ok {
			key := u.Module + " " + src
			if i, ok := said[key]; ok {
				out[i].Also = append(out[i].Also, u.By+" at "+u.Pos)
				continue
			}
			said[key] = len(out)
			var have []string
			for _, p := range pins {
				have = append(have, p.Source+" "+p.Version)
			}
			out = append(out, ProviderNeed{Use: u, Why: "the toolchain does not supply it (it supplies " + strings.Join(have, ", ") + ")"})
			continue
		}
		if u.Constraint == "" || meets(pin.Version, u.Constraint) {
			continue
		}
		relaxed := false
		for _, rp := range relax {
			relaxed = relaxed || (rp.Provider == u.Name && rp.Constraint == u.Constraint && u.By == "required_providers")
		}
		if relaxed {
			continue
		}
		n := ProviderNeed{Use: u, Why: fmt.Sprintf("the constraint excludes the pinned %s", pin.Version)}
		if u.By == "required_providers" {
			n.Relaxable = true
			n.Why += fmt.Sprintf(" (declare relax_providers: [{provider: %s, constraint: %q, why: ...}] in estate.yaml to run it on %s)", u.Name, u.Constraint, pin.Version)
		}
		out = append(out, n)
	}
	return out
}

// source is the provider's address without a registry host, the local
// name's default ("hashicorp/<name>") when the module names none.
func (u ProviderUse) source() string {
	s := strings.ToLower(u.Source)
	if s == "" {
		return "hashicorp/" + strings.ToLower(u.Name)
	}
	if parts := strings.Split(s, "/"); len(parts) == 3 {
		s = parts[1] + "/" + parts[2]
	}
	return s
}

func (u ProviderUse) what() string {
	if u.Constraint != "" {
		return fmt.Sprintf("%s %q", u.source(), u.Constraint)
	}
	return u.source()
}

func pinFor(pins []ProviderPin, source string) (ProviderPin, bool) {
	for _, p := range pins {
		if strings.EqualFold(p.Source, source) {
			return p, true
		}
	}
	return ProviderPin{}, false
}

// meets reports whether version v meets a Terraform version constraint;
// an unreadable constraint meets nothing.
func meets(v, constraint string) bool {
	c, err := version.NewConstraint(constraint)
	if err != nil {
		return false
	}
	ver, err := version.NewVersion(v)
	return err == nil && c.Check(ver)
}

func sortedModules[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
