package local

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func (s *starter) etcd(ctx context.Context) error {
	peer := "http://" + loopback(s.peerPort)
	client := "http://" + loopback(s.etcdPort)
	// Short heartbeat/election and no fsync: a throwaway single member
	// elects itself in ~0.1 s instead of ~0.7 s.
	p, err := s.launch("etcd", []string{
		"--name=gauntlet", "--data-dir=" + filepath.Join(s.dir, "etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=gauntlet=" + peer,
		"--unsafe-no-fsync", "--heartbeat-interval=10", "--election-timeout=100", "--log-level=warn",
	}, nil)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	return waitFor(ctx, p, 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		body, code, err := get(ctx, hc, client+"/health")
		return err == nil && code == 200 && strings.Contains(body, `"health":"true"`), err
	})
}

func (s *starter) apiserver(ctx context.Context) error {
	k := s.pki
	p, err := s.launch("kube-apiserver", []string{
		"--etcd-servers=http://" + loopback(s.etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.apiPort),
		// Required with a loopback advertise address; the only cost is
		// that default/kubernetes has no endpoints.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(s.dir, "apiserver"),
		"--tls-cert-file=" + k.APIServer.CertFile, "--tls-private-key-file=" + k.APIServer.KeyFile,
		"--client-ca-file=" + k.CA.CertFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + k.SAPubFile, "--service-account-signing-key-file=" + k.SAKeyFile,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC", "--allow-privileged=true",
		// Front-proxy flags: aggregated APIs (APIService objects) need them.
		"--requestheader-client-ca-file=" + k.FrontProxyCA.CertFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + k.FrontProxyClient.CertFile, "--proxy-client-key-file=" + k.FrontProxyClient.KeyFile,
		"--profiling=false",
	}, nil)
	if err != nil {
		return err
	}
	s.c.rest = &rest.Config{
		Host: "https://" + loopback(s.apiPort),
		TLSClientConfig: rest.TLSClientConfig{
			CAData: k.CA.CertPEM, CertData: k.Admin.CertPEM, KeyData: k.Admin.KeyPEM,
		},
		QPS: 200, Burst: 400,
	}
	if s.c.kubeconfig, err = writeKubeconfig(filepath.Join(s.dir, "kubeconfig"), s.c.name, s.c.rest.Host, k.CA, k.Admin); err != nil {
		return err
	}
	hc, err := adminHTTP(k)
	if err != nil {
		return err
	}
	return waitFor(ctx, p, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		_, code, err := get(ctx, hc, s.c.rest.Host+"/readyz")
		return err == nil && code == 200, err
	})
}

func (s *starter) controllerManager(ctx context.Context) error {
	k := s.pki
	kc, err := writeKubeconfig(filepath.Join(s.dir, "controller-manager.kubeconfig"), s.c.name, s.c.rest.Host, k.CA, k.ControllerManager)
	if err != nil {
		return err
	}
	p, err := s.launch("kube-controller-manager", []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.kcmPort),
		"--cert-dir=" + filepath.Join(s.dir, "controller-manager"), "--leader-elect=false",
		"--service-account-private-key-file=" + k.SAKeyFile, "--root-ca-file=" + k.CA.CertFile,
		"--cluster-signing-cert-file=" + k.CA.CertFile, "--cluster-signing-key-file=" + k.CA.KeyFile,
		"--use-service-account-credentials=true", "--controllers=*,bootstrapsigner,tokencleaner",
		"--service-cluster-ip-range=" + serviceCIDR,
		// The default client QPS makes controller start-up take ~6 s.
		"--kube-api-qps=500", "--kube-api-burst=1000",
		"--profiling=false",
	}, nil)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(s.c.rest)
	if err != nil {
		return err
	}
	// Its /healthz answers before the controllers run; the default
	// ServiceAccount appearing proves they do.
	return waitFor(ctx, p, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

func (s *starter) scheduler(ctx context.Context) error {
	k := s.pki
	kc, err := writeKubeconfig(filepath.Join(s.dir, "scheduler.kubeconfig"), s.c.name, s.c.rest.Host, k.CA, k.Sched)
	if err != nil {
		return err
	}
	p, err := s.launch("kube-scheduler", []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.schedPort),
		"--cert-dir=" + filepath.Join(s.dir, "scheduler"), "--leader-elect=false",
		"--kube-api-qps=200", "--kube-api-burst=400", "--profiling=false",
	}, nil)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return waitFor(ctx, p, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		_, code, err := get(ctx, hc, "https://"+loopback(s.schedPort)+"/healthz")
		return err == nil && code == 200, err
	})
}

// nodeName is the one fake Node kwok manages.
const nodeName = "gauntlet-node-0"

func (s *starter) kwok(ctx context.Context) error {
	k := s.pki
	kc, err := writeKubeconfig(filepath.Join(s.dir, "kwok.kubeconfig"), s.c.name, s.c.rest.Host, k.CA, k.Kwok)
	if err != nil {
		return err
	}
	b := s.bins["kwok"]
	var stages []string
	for _, name := range []string{"node-initialize.yaml", "node-heartbeat.yaml", "pod-ready.yaml", "pod-complete.yaml", "pod-delete.yaml"} {
		path, ok := b.Assets[name]
		if !ok {
			return fmt.Errorf("kwok stage %s is not in the toolchain (re-run `go run ./tools/gauntlet toolchain`)", name)
		}
		stages = append(stages, path)
	}
	cs, err := kubernetes.NewForConfig(s.c.rest)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create fake node: %w", err)
	}
	p, err := s.launch("kwok", []string{
		"--kubeconfig=" + kc, "--config=" + strings.Join(stages, ","),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=10.244.0.0/16", "--node-ip=10.240.0.2",
	}, nil)
	if err != nil {
		return err
	}
	return waitFor(ctx, p, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func fakeNode() *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        nodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/hostname": nodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

func adminHTTP(k *pki) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(k.CA.CertPEM) {
		return nil, fmt.Errorf("bad CA certificate")
	}
	cert, err := tls.X509KeyPair(k.Admin.CertPEM, k.Admin.KeyPEM)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}, nil
}

func get(ctx context.Context, hc *http.Client, url string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return string(b), resp.StatusCode, nil
}

// writeKubeconfig writes a self-contained kubeconfig (certificates
// inline), readable only by the user.
func writeKubeconfig(path, name, server string, ca, user *pair) (string, error) {
	b64 := base64.StdEncoding.EncodeToString
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: %[1]s-admin
  user:
    client-certificate-data: %[4]s
    client-key-data: %[5]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s-admin
current-context: %[1]s
`, "gauntlet-"+name, server, b64(ca.CertPEM), b64(user.CertPEM), b64(user.KeyPEM))
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}
