package local

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pair is a PEM certificate and key written to disk.
type pair struct {
	CertPEM, KeyPEM []byte
	CertFile        string
	KeyFile         string
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
}

// pki is everything a local control plane authenticates with. ECDSA P-256
// keys are generated in-process: instant, where RSA via openssl takes
// seconds on a loaded machine.
type pki struct {
	CA, FrontProxyCA                *pair
	APIServer, FrontProxyClient     *pair
	Admin, ControllerManager, Sched *pair
	Kwok                            *pair
	SAKeyFile, SAPubFile            string
}

func newPKI(dir string, serviceIP net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{}
	var err error
	if p.CA, err = selfSigned(dir, "ca", "gauntlet-local-ca"); err != nil {
		return nil, err
	}
	if p.FrontProxyCA, err = selfSigned(dir, "front-proxy-ca", "gauntlet-front-proxy-ca"); err != nil {
		return nil, err
	}
	serving := x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), serviceIP},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if p.APIServer, err = signed(dir, "apiserver", p.CA, serving); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		dst      **pair
		ca       *pair
		name, cn string
		org      []string
	}{
		{&p.FrontProxyClient, p.FrontProxyCA, "front-proxy-client", "front-proxy-client", nil},
		{&p.Admin, p.CA, "admin", "gauntlet-admin", []string{"system:masters"}},
		{&p.ControllerManager, p.CA, "controller-manager", "system:kube-controller-manager", nil},
		{&p.Sched, p.CA, "scheduler", "system:kube-scheduler", nil},
		{&p.Kwok, p.CA, "kwok", "gauntlet-kwok", []string{"system:masters"}},
	} {
		tmpl := x509.Certificate{
			Subject:     pkix.Name{CommonName: c.cn, Organization: c.org},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if *c.dst, err = signed(dir, c.name, c.ca, tmpl); err != nil {
			return nil, err
		}
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.SAKeyFile, p.SAPubFile = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := writePEM(p.SAKeyFile, "EC PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	if err := writePEM(p.SAPubFile, "PUBLIC KEY", pubDER); err != nil {
		return nil, err
	}
	return p, nil
}

func selfSigned(dir, name, cn string) (*pair, error) {
	tmpl := x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	return issue(dir, name, nil, tmpl)
}

func signed(dir, name string, ca *pair, tmpl x509.Certificate) (*pair, error) {
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	return issue(dir, name, ca, tmpl)
}

func issue(dir, name string, ca *pair, tmpl x509.Certificate) (*pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(7 * 24 * time.Hour)
	parent, signer := &tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	p := &pair{
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		CertFile: filepath.Join(dir, name+".crt"),
		KeyFile:  filepath.Join(dir, name+".key"),
		cert:     cert,
		key:      key,
	}
	if err := os.WriteFile(p.CertFile, p.CertPEM, 0o600); err != nil {
		return nil, err
	}
	return p, os.WriteFile(p.KeyFile, p.KeyPEM, 0o600)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
