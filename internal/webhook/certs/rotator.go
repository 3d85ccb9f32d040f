package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// retryAfterError is how soon a failed sync is retried.
const retryAfterError = 10 * time.Second

// Rotator keeps the Secret, the files in the cert dir and the injected CA bundles in step. It is
// a manager.Runnable that runs on every replica (not only the leader), because every replica's
// webhook server needs the files; the Secret is the shared source and writes to it use
// optimistic concurrency.
type Rotator struct {
	opts   Options
	client client.Client
	log    logr.Logger
	// now is the clock; tests replace it.
	now func() time.Time
	// recorder, when set, records Warning Events about a Secret the operator leaves untouched.
	recorder events.EventRecorder
	warned   string
	// trustedAt is when this process saw each signing CA (by fingerprint) join the injected
	// bundles; zero when it was already there at first sight.
	trustedAt map[string]time.Time
	// pending is when the files may switch to a certificate held back by switchAt.
	pending time.Time
}

var (
	_ manager.Runnable               = (*Rotator)(nil)
	_ manager.LeaderElectionRunnable = (*Rotator)(nil)
)

// Scheme returns the types a Rotator's client must know.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// NewRotator returns a Rotator for opts (mode self). c should be an uncached client over Scheme():
// the Rotator reads a handful of named objects and must not make the manager cache every Secret,
// webhook configuration or CRD in the cluster.
func NewRotator(c client.Client, opts Options) (*Rotator, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Rotator{opts: o, client: c, log: ctrl.Log.WithName("webhook-certs"), now: time.Now, trustedAt: map[string]time.Time{}}, nil
}

// Setup does nothing unless opts.Mode is self. In self mode it runs one Sync right away, so
// that the webhook server finds its certificate when the manager starts, and adds the Rotator to
// mgr to keep it fresh.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if o, err := opts.withDefaults(); err != nil || o.Mode != ModeSelf {
		return err
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	r, err := NewRotator(c, opts)
	if err != nil {
		return err
	}
	r.recorder = mgr.GetEventRecorder("opentelemetry-operator")
	// A Secret the operator did not create and cannot use is reported (log, Event) and retried,
	// not a start-up failure: the operator keeps reconciling, only its webhooks are unavailable.
	if err := r.Sync(ctx); err != nil && !errors.Is(err, ErrForeignSecret) {
		return err
	}
	return mgr.Add(r)
}

// NeedLeaderElection is false: every replica writes its own files.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Start syncs every SyncInterval (sooner after an error) until ctx ends.
func (r *Rotator) Start(ctx context.Context) error {
	for {
		wait := r.opts.SyncInterval
		if err := r.Sync(ctx); err != nil {
			if !errors.Is(err, ErrForeignSecret) {
				r.log.Error(err, "syncing the webhook certificate")
			}
			wait = min(wait, retryAfterError)
		}
		if !r.pending.IsZero() {
			wait = max(min(wait, time.Until(r.pending)), 10*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sync makes one pass: renew the Secret if needed, inject the CA bundle, write the files. The
// files change only once the API servers trust the CA that issued the new certificate (see
// switchAt); until then the replica keeps serving the certificate it has.
func (r *Rotator) Sync(ctx context.Context) error {
	m, err := r.ensureSecret(ctx)
	if err != nil {
		if errors.Is(err, ErrForeignSecret) {
			r.warnForeign(err)
			// Let the webhook server start (it cannot without files); the API servers do not
			// trust this certificate, so webhook calls fail until the Secret is fixed.
			if perr := r.writePlaceholder(); perr != nil {
				return errors.Join(err, perr)
			}
		}
		return err
	}
	added, err := r.inject(ctx, m.bundlePEM, m.ca)
	if err != nil {
		return err
	}
	now := r.now()
	fp := fingerprint(m.ca)
	if _, seen := r.trustedAt[fp]; added {
		r.trustedAt[fp] = now
	} else if !seen {
		r.trustedAt[fp] = time.Time{} // already in every bundle when this process first looked
	}
	if at, ok := r.switchAt(m, now); !ok {
		r.pending = at
		r.log.V(1).Info("keeping the served certificate until the API servers trust the new CA", "until", at)
		return nil
	}
	r.pending = time.Time{}
	return r.writeFiles(m)
}

// switchAt reports whether the files may be replaced by m's certificate now, and otherwise when.
// They may when the served certificate is missing, unusable, expired or no longer trusted by m's
// bundle, or when the CA that issued m's certificate has been in the bundles for TrustDelay (as
// recorded in the Secret by the replica that renewed it, and as seen by this replica).
func (r *Rotator) switchAt(m *material, now time.Time) (time.Time, bool) {
	served, err := os.ReadFile(filepath.Join(r.opts.CertDir, CertFile))
	if err != nil || bytes.Equal(served, m.certPEM) {
		return now, true
	}
	certs, err := parseCerts(served)
	if err != nil || len(certs) == 0 || !now.Before(certs[0].NotAfter) || !issuedByOneOf(certs[0], m.bundle) {
		return now, true
	}
	at := m.serveAfter
	if seen := r.trustedAt[fingerprint(m.ca)]; !seen.IsZero() {
		at = maxTime(at, seen.Add(r.opts.TrustDelay))
	}
	return at, !now.Before(at)
}

func issuedByOneOf(c *x509.Certificate, bundle []*x509.Certificate) bool {
	for _, ca := range bundle {
		if c.CheckSignatureFrom(ca) == nil {
			return true
		}
	}
	return false
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// warnForeign logs err and records a Warning Event on the Secret, once per distinct message.
func (r *Rotator) warnForeign(err error) {
	r.log.Error(err, "the webhook certificate Secret is left untouched")
	if r.recorder == nil || r.warned == err.Error() {
		return
	}
	r.warned = err.Error()
	ref := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.opts.Namespace, Name: r.opts.SecretName}}
	r.recorder.Eventf(ref, nil, corev1.EventTypeWarning, "ForeignSecret", "IssueCertificate", "%s", err.Error())
}

// writePlaceholder writes a self-signed certificate into empty cert files, so that the webhook
// server starts; it is never stored or injected.
func (r *Rotator) writePlaceholder() error {
	if _, err := os.Stat(filepath.Join(r.opts.CertDir, CertFile)); err == nil {
		return nil
	}
	now := r.now()
	ca, caKey, _, err := newCA(r.opts.Validity, now)
	if err != nil {
		return err
	}
	m := &material{ca: ca}
	if m.cert, m.certPEM, m.keyPEM, err = newServing(ca, caKey, r.opts.DNSNames(), r.opts.ExtraIPs, r.opts.Validity, now); err != nil {
		return err
	}
	return r.writeFiles(m)
}

// writeFiles writes tls.key and tls.crt when they differ, each by an atomic rename.
func (r *Rotator) writeFiles(m *material) error {
	if err := os.MkdirAll(r.opts.CertDir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyFile, m.keyPEM}, {CertFile, m.certPEM}} {
		path := filepath.Join(r.opts.CertDir, f.name)
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, f.data) {
			continue
		}
		tmp, err := os.CreateTemp(r.opts.CertDir, "."+f.name+"-")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if werr != nil || cerr != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("writing %s: %v %v", path, werr, cerr)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}

// inject sets the CA bundle on the named webhook configurations and CRDs where it differs, and
// reports whether ca was missing from any of them before. Objects that do not exist are skipped;
// they are injected on a later sync once they appear.
func (r *Rotator) inject(ctx context.Context, bundle []byte, ca *x509.Certificate) (bool, error) {
	added := false
	set := func(dst *[]byte) bool {
		if !bundleHas(*dst, ca) {
			added = true
		}
		return setBundle(dst, bundle)
	}
	err := r.eachBundle(ctx, func(obj client.Object, bundles []*[]byte) error {
		base := obj.DeepCopyObject().(client.Object)
		changed := false
		for _, b := range bundles {
			changed = set(b) || changed
		}
		if !changed {
			return nil
		}
		if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("injecting the CA bundle into %T %s: %w", obj, obj.GetName(), err)
		}
		r.log.Info("injected the webhook CA bundle", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
		return nil
	})
	return added, err
}

// currentBundles returns the CA bundles injected into the configured objects now.
func (r *Rotator) currentBundles(ctx context.Context) ([][]byte, error) {
	var out [][]byte
	err := r.eachBundle(ctx, func(_ client.Object, bundles []*[]byte) error {
		for _, b := range bundles {
			out = append(out, *b)
		}
		return nil
	})
	return out, err
}

// eachBundle reads each configured object that exists and calls f with it and pointers to its CA
// bundle fields (webhooks' clientConfig.caBundle, a CRD's conversion webhook caBundle).
func (r *Rotator) eachBundle(ctx context.Context, f func(client.Object, []*[]byte) error) error {
	// visit reads the object called name into obj and calls f with the bundles it has, if any.
	visit := func(name string, obj client.Object, bundles func() []*[]byte) error {
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("reading %T %s: %w", obj, name, err)
		}
		if bs := bundles(); len(bs) > 0 {
			return f(obj, bs)
		}
		return nil
	}
	for _, name := range r.opts.MutatingWebhookConfigurations {
		obj := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := visit(name, obj, func() []*[]byte { return webhookBundles(obj.Webhooks, mutatingClient) }); err != nil {
			return err
		}
	}
	for _, name := range r.opts.ValidatingWebhookConfigurations {
		obj := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := visit(name, obj, func() []*[]byte { return webhookBundles(obj.Webhooks, validatingClient) }); err != nil {
			return err
		}
	}
	for _, name := range r.opts.CRDs {
		obj := &apiextensionsv1.CustomResourceDefinition{}
		if err := visit(name, obj, func() []*[]byte {
			c := obj.Spec.Conversion
			if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
				return nil
			}
			return []*[]byte{&c.Webhook.ClientConfig.CABundle}
		}); err != nil {
			return err
		}
	}
	return nil
}

// webhookBundles points at the clientConfig.caBundle of each of webhooks.
func webhookBundles[W any](webhooks []W, clientConfig func(*W) *admissionregistrationv1.WebhookClientConfig) []*[]byte {
	bs := make([]*[]byte, 0, len(webhooks))
	for i := range webhooks {
		bs = append(bs, &clientConfig(&webhooks[i]).CABundle)
	}
	return bs
}

func mutatingClient(w *admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.WebhookClientConfig {
	return &w.ClientConfig
}

func validatingClient(w *admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.WebhookClientConfig {
	return &w.ClientConfig
}

// bundleHas reports whether the PEM bundle contains ca.
func bundleHas(bundle []byte, ca *x509.Certificate) bool {
	certs, err := parseCerts(bundle)
	if err != nil {
		return false
	}
	for _, c := range certs {
		if c.Equal(ca) {
			return true
		}
	}
	return false
}

func setBundle(dst *[]byte, bundle []byte) bool {
	if bytes.Equal(*dst, bundle) {
		return false
	}
	*dst = bytes.Clone(bundle)
	return true
}
