package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/test/simcluster"
)

// floorWebhookName is the do-nothing webhook's name: the floor every admission webhook pays.
const floorWebhookName = "floor.bench.otelop.io"

// armLabel marks the floor's namespaces: the floor webhook selects them and ours skips them, so
// every pod goes through exactly one of the two.
const armLabel = "bench.otelop.io/webhook"

// floorServer is an admission webhook that answers every review allowed, with no patch: it decodes
// the AdmissionReview (to echo its UID) and encodes the answer, nothing else. It listens on
// 127.0.0.1 only, with a certificate from its own CA, and serves HTTP/2 as the operator's does.
type floorServer struct {
	caPEM []byte
	port  int
	srv   *http.Server

	mu   sync.Mutex
	seen map[string]int // namespace -> reviews answered
}

func startFloor() (*floorServer, error) {
	caPEM, cert, err := selfSignedServing()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &floorServer{caPEM: caPEM, port: ln.Addr().(*net.TCPAddr).Port, seen: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate-v1-pod", f.handle)
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}}
	go func() {
		if err := f.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			say("floor webhook: %v", err)
		}
	}()
	return f, nil
}

func (f *floorServer) handle(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.seen[review.Request.Namespace]++
	f.mu.Unlock()
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// answered is how many reviews the floor answered for namespace ns.
func (f *floorServer) answered(ns string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[ns]
}

func (f *floorServer) stop() { _ = f.srv.Close() }

// selfSignedServing makes a throwaway CA and a serving certificate for 127.0.0.1 signed by it.
func selfSignedServing() (caPEM []byte, cert tls.Certificate, err error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, cert, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "podwebhook floor CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, cert, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, cert, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, cert, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, cert, err
	}
	cert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), cert, nil
}

// registerFloor keeps ours off the floor's namespaces and registers the floor webhook for pods in
// them, with every setting of ours (rules, failure policy, timeout, match and reinvocation
// policies) but the selector, the URL and the CA bundle.
func registerFloor(ctx context.Context, c client.Client, f *floorServer) error {
	var cfg admissionregv1.MutatingWebhookConfiguration
	name := simcluster.WebhookNamePrefix + "mutating-webhook-configuration"
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &cfg); err != nil {
		return err
	}
	var ours *admissionregv1.MutatingWebhook
	for i := range cfg.Webhooks {
		if cfg.Webhooks[i].Name == webhookName {
			ours = &cfg.Webhooks[i]
		}
	}
	if ours == nil {
		return fmt.Errorf("%s has no webhook %s", name, webhookName)
	}
	floor := *ours.DeepCopy()
	if ours.NamespaceSelector == nil {
		ours.NamespaceSelector = &metav1.LabelSelector{}
	}
	ours.NamespaceSelector.MatchExpressions = append(ours.NamespaceSelector.MatchExpressions,
		metav1.LabelSelectorRequirement{Key: armLabel, Operator: metav1.LabelSelectorOpDoesNotExist})
	if err := c.Update(ctx, &cfg); err != nil {
		return fmt.Errorf("keeping %s off the floor's namespaces: %w", webhookName, err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/mutate-v1-pod", f.port)
	floor.Name = floorWebhookName
	floor.ClientConfig = admissionregv1.WebhookClientConfig{URL: &url, CABundle: f.caPEM}
	floor.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{armLabel: "floor"}}
	floor.ObjectSelector = nil
	return c.Create(ctx, &admissionregv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-floor"},
		Webhooks:   []admissionregv1.MutatingWebhook{floor},
	})
}
