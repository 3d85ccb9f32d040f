package certs

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations of the certificate Secret.
const (
	// CreatedByAnnotation marks a Secret the operator created; only such a Secret (or one with
	// the managed-by label an earlier version set) is overwritten when its content is unusable.
	CreatedByAnnotation = "operator.opentelemetry.io/webhook-cert"
	createdByValue      = "self-managed"
	// serveAfterAnnotation holds material.serveAfter (RFC 3339).
	serveAfterAnnotation = "operator.opentelemetry.io/webhook-cert-serve-after"
	// retireAnnotation holds material.retire as JSON {fingerprint: RFC 3339}.
	retireAnnotation = "operator.opentelemetry.io/webhook-cert-retire"
	managedByLabel   = "app.kubernetes.io/managed-by"
	managedByValue   = "opentelemetry-operator"
)

// ErrForeignSecret says the Secret named for the certificate exists, was not created by the
// operator and holds no usable certificate: the operator leaves it untouched.
var ErrForeignSecret = errors.New("the Secret exists, was not created by the operator and holds no usable webhook certificate")

// createdByUs reports whether s carries the operator's creation marks.
func createdByUs(s *corev1.Secret) bool {
	return s.Annotations[CreatedByAnnotation] == createdByValue || s.Labels[managedByLabel] == managedByValue
}

// readMaterial parses s with its annotations. adopted is true for a Secret holding a pair without
// the CA key (read-only: never renewed or written).
func readMaterial(s *corev1.Secret, now time.Time) (m *material, adopted bool, err error) {
	if m, err = parseMaterial(s.Data); err == nil {
		m.serveAfter, _ = time.Parse(time.RFC3339, s.Annotations[serveAfterAnnotation])
		m.retire = map[string]time.Time{}
		var raw map[string]string
		if json.Unmarshal([]byte(s.Annotations[retireAnnotation]), &raw) == nil {
			for fp, v := range raw {
				if t, perr := time.Parse(time.RFC3339, v); perr == nil {
					m.retire[fp] = t
				}
			}
		}
		return m, false, nil
	}
	if createdByUs(s) {
		return nil, false, err
	}
	if pair, perr := parsePair(s.Data, now); perr == nil {
		return pair, true, nil
	}
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return nil, false, fmt.Errorf("webhook certificate Secret %s/%s (type %s, keys [%s]): %w: %v; delete it, or choose another name with --webhook-cert-secret",
		s.Namespace, s.Name, s.Type, strings.Join(keys, ", "), ErrForeignSecret, err)
}

// store writes m into secret (existing) or creates it. The type of an existing Secret is kept (it
// is immutable; an Opaque Secret holding our keys works as well).
func (r *Rotator) store(ctx context.Context, secret *corev1.Secret, exists bool, m *material) error {
	if !exists {
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.opts.Namespace, Name: r.opts.SecretName,
				Labels: map[string]string{managedByLabel: managedByValue}},
			Type: corev1.SecretTypeTLS,
		}
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	if !exists {
		secret.Annotations[CreatedByAnnotation] = createdByValue
	}
	delete(secret.Annotations, serveAfterAnnotation)
	if !m.serveAfter.IsZero() {
		secret.Annotations[serveAfterAnnotation] = m.serveAfter.UTC().Format(time.RFC3339)
	}
	delete(secret.Annotations, retireAnnotation)
	if len(m.retire) > 0 {
		raw := map[string]string{}
		for fp, t := range m.retire {
			raw[fp] = t.UTC().Format(time.RFC3339)
		}
		b, _ := json.Marshal(raw)
		secret.Annotations[retireAnnotation] = string(b)
	}
	secret.Data = m.data()
	if exists {
		return r.client.Update(ctx, secret)
	}
	return r.client.Create(ctx, secret)
}

// ensureSecret returns the current material, creating or renewing the Secret when needed. A
// valid Secret, e.g. after a restart, is used as it is. A Secret created or replaced here keeps
// trusting the CAs the API servers trust now (read from the injected bundles), so that replicas
// still serving a certificate they issued are not cut off.
func (r *Rotator) ensureSecret(ctx context.Context) (*material, error) {
	key := client.ObjectKey{Namespace: r.opts.Namespace, Name: r.opts.SecretName}
	for attempt := 0; ; attempt++ {
		secret := &corev1.Secret{}
		err := r.client.Get(ctx, key, secret)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s: %w", key, err)
		}
		now := r.now()
		var old *material
		if exists {
			var adopted bool
			old, adopted, err = readMaterial(secret, now)
			switch {
			case errors.Is(err, ErrForeignSecret):
				return nil, err
			case err != nil:
				r.log.Info("replacing an unusable webhook certificate Secret the operator created", "secret", key, "reason", err.Error())
			case adopted:
				if dueForRenewal(old.cert, now) {
					r.log.Info("the webhook certificate Secret was not created by the operator and has no CA key: it is served as it is and cannot be renewed", "secret", key, "notAfter", old.cert.NotAfter)
				}
				return old, nil
			}
		}
		var carried []*x509.Certificate
		if old == nil {
			if carried, err = r.trustedNow(ctx); err != nil {
				return nil, err
			}
		}
		m, changed, err := renew(old, carried, r.opts, now)
		if err != nil || !changed {
			return m, err
		}
		err = r.store(ctx, secret, exists, m)
		// Another replica won the race: use what it stored.
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("storing Secret %s: %w", key, err)
		}
		r.log.Info("issued a webhook serving certificate", "secret", key, "notAfter", m.cert.NotAfter, "caNotAfter", m.ca.NotAfter,
			"bundle", len(m.bundle), "serveAfter", m.serveAfter)
		return m, nil
	}
}

// trustedNow returns the CA certificates in the bundles currently injected into the configured
// objects (deduplicated; expired ones dropped by renew).
func (r *Rotator) trustedNow(ctx context.Context) ([]*x509.Certificate, error) {
	bundles, err := r.currentBundles(ctx)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	seen := map[string]bool{}
	for _, b := range bundles {
		certs, err := parseCerts(b)
		if err != nil {
			continue
		}
		for _, c := range certs {
			if fp := fingerprint(c); c.IsCA && !seen[fp] {
				seen[fp] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}
