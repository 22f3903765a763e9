package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigName names the cluster, user and context in written
// kubeconfigs.
const kubeconfigName = "gauntlet-wire"

// WriteKubeconfig writes a self-contained kubeconfig for the proxy to
// path, mode 0600: its URL, its CA inline, and a user with its token (so
// no client tool goes looking for credentials or prompts for them). The
// file is replaced atomically, so an engine reading it never sees half.
func (p *Proxy) WriteKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigName] = &clientcmdapi.Cluster{Server: p.url, CertificateAuthorityData: p.CAData()}
	cfg.AuthInfos[kubeconfigName] = &clientcmdapi.AuthInfo{Token: p.token}
	cfg.Contexts[kubeconfigName] = &clientcmdapi.Context{Cluster: kubeconfigName, AuthInfo: kubeconfigName}
	cfg.CurrentContext = kubeconfigName
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("wire: kubeconfig %s: %w", path, err)
	}
	// CreateTemp makes the file 0600 before a byte of the token is in it.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("wire: kubeconfig %s: %w", path, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("wire: kubeconfig %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("wire: kubeconfig %s: %w", path, err)
	}
	return nil
}
