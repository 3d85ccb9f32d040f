package certs

import (
	"bytes"
	"context"
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
	return &Rotator{opts: o, client: c, log: ctrl.Log.WithName("webhook-certs"), now: time.Now}, nil
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
	if err := r.Sync(ctx); err != nil {
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
			r.log.Error(err, "syncing the webhook certificate")
			wait = min(wait, retryAfterError)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sync makes one pass: renew the Secret if needed, inject the CA bundle, write the files.
func (r *Rotator) Sync(ctx context.Context) error {
	m, err := r.ensureSecret(ctx)
	if err != nil {
		return err
	}
	// Bundle first: it still holds a replaced CA, so the API server trusts both the certificate
	// being served now and the one written next.
	if err := r.inject(ctx, m.bundlePEM); err != nil {
		return err
	}
	return r.writeFiles(m)
}

// ensureSecret returns the current material, creating or renewing the Secret when needed. A
// valid Secret, e.g. after a restart, is used as it is.
func (r *Rotator) ensureSecret(ctx context.Context) (*material, error) {
	key := client.ObjectKey{Namespace: r.opts.Namespace, Name: r.opts.SecretName}
	for attempt := 0; ; attempt++ {
		secret := &corev1.Secret{}
		err := r.client.Get(ctx, key, secret)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s: %w", key, err)
		}
		var old *material
		if exists {
			if old, err = parseMaterial(secret.Data); err != nil {
				r.log.Info("replacing an unusable webhook certificate Secret", "secret", key, "reason", err.Error())
			}
		}
		m, changed, err := renew(old, r.opts, r.now())
		if err != nil || !changed {
			return m, err
		}
		if exists {
			secret.Data = m.data()
			secret.Type = corev1.SecretTypeTLS
			err = r.client.Update(ctx, secret)
		} else {
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
					Labels: map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator"}},
				Type: corev1.SecretTypeTLS,
				Data: m.data(),
			}
			err = r.client.Create(ctx, secret)
		}
		// Another replica won the race: use what it stored.
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("storing Secret %s: %w", key, err)
		}
		r.log.Info("issued a webhook serving certificate", "secret", key, "notAfter", m.cert.NotAfter, "caNotAfter", m.ca.NotAfter)
		return m, nil
	}
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

// inject sets the CA bundle on the named webhook configurations and CRDs where it differs.
// Objects that do not exist are skipped; they are injected on a later sync once they appear.
func (r *Rotator) inject(ctx context.Context, bundle []byte) error {
	for _, name := range r.opts.MutatingWebhookConfigurations {
		obj := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := r.patch(ctx, name, obj, func() bool {
			changed := false
			for i := range obj.Webhooks {
				changed = setBundle(&obj.Webhooks[i].ClientConfig.CABundle, bundle) || changed
			}
			return changed
		}); err != nil {
			return err
		}
	}
	for _, name := range r.opts.ValidatingWebhookConfigurations {
		obj := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := r.patch(ctx, name, obj, func() bool {
			changed := false
			for i := range obj.Webhooks {
				changed = setBundle(&obj.Webhooks[i].ClientConfig.CABundle, bundle) || changed
			}
			return changed
		}); err != nil {
			return err
		}
	}
	for _, name := range r.opts.CRDs {
		obj := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.patch(ctx, name, obj, func() bool {
			c := obj.Spec.Conversion
			if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
				return false
			}
			return setBundle(&c.Webhook.ClientConfig.CABundle, bundle)
		}); err != nil {
			return err
		}
	}
	return nil
}

func setBundle(dst *[]byte, bundle []byte) bool {
	if bytes.Equal(*dst, bundle) {
		return false
	}
	*dst = bytes.Clone(bundle)
	return true
}

// patch reads the cluster-scoped object name into obj, applies mutate and sends a merge patch
// guarded by the resourceVersion when mutate reports a change.
func (r *Rotator) patch(ctx context.Context, name string, obj client.Object, mutate func() bool) error {
	if err := r.client.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %T %s: %w", obj, name, err)
	}
	base := obj.DeepCopyObject().(client.Object)
	if !mutate() {
		return nil
	}
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("injecting the CA bundle into %T %s: %w", obj, name, err)
	}
	r.log.Info("injected the webhook CA bundle", "kind", fmt.Sprintf("%T", obj), "name", name)
	return nil
}
