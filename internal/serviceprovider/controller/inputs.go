package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
)

// inputError is bad user input: reported in status and events, not retried in a hot loop.
type inputError struct {
	reason string
	msg    string
}

func (e *inputError) Error() string { return e.msg }

// resolved is the validated input of one reconcile.
type resolved struct {
	version     spv1alpha1.VersionConfig
	values      map[string]any
	pullSecrets []*corev1.Secret
	chartSecret *corev1.Secret
	// chartCA is the PEM bundle of the version's chartCABundleRef, nil for none.
	chartCA  []byte
	caBundle []byte
}

// resolve checks the requested version against the ProviderConfig and reads every source object
// the version references in the provider's namespace. Any problem is an inputError naming the
// field path.
func (s *Service) resolve(ctx context.Context, obj *spv1alpha1.OtelOperator, cfg *spv1alpha1.ProviderConfig) (*resolved, error) {
	v, ok := cfg.Version(obj.Spec.Version)
	if !ok {
		return nil, &inputError{reason: spv1alpha1.ReasonVersionNotAllowed, msg: fmt.Sprintf(
			"spec.version %q is not offered by ProviderConfig %q; allowed versions (spec.versions[].version): %s",
			obj.Spec.Version, cfg.Name, strings.Join(cfg.AllowedVersions(), ", "))}
	}
	if v.ChartURL == "" {
		v.ChartURL = spv1alpha1.DefaultChartURL
	}
	values, err := flux.ParseValues(v.Version, v.HelmValues)
	if err != nil {
		return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf("ProviderConfig %q: %v", cfg.Name, err)}
	}
	if err := flux.CheckValues(v.Version, values); err != nil {
		return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf("ProviderConfig %q: %v", cfg.Name, err)}
	}
	if v.ChartInsecure && v.ChartCABundleRef != nil {
		// The CRD rejects this too; a ProviderConfig stored before that rule still gets a clear error.
		return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf(
			"ProviderConfig %q: spec.versions[%q].chartInsecure: must not be true together with chartCABundleRef: chartInsecure is for a plain-HTTP registry, chartCABundleRef for an HTTPS registry with a private CA",
			cfg.Name, v.Version)}
	}
	if v.ChartInsecure {
		if err := flux.CheckInsecureRegistry(v.ChartURL); err != nil {
			return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf(
				"ProviderConfig %q: spec.versions[%q].chartInsecure: %v", cfg.Name, v.Version, err)}
		}
	}
	names, err := flux.ImagePullSecrets(v.Version, values)
	if err != nil {
		return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf("ProviderConfig %q: %v", cfg.Name, err)}
	}
	r := &resolved{version: v, values: values}
	for _, n := range names {
		sec, err := s.source(ctx, &corev1.Secret{}, n, fmt.Sprintf("spec.versions[%q].helmValues.imagePullSecrets", v.Version), cfg.Name)
		if err != nil {
			return nil, err
		}
		r.pullSecrets = append(r.pullSecrets, sec.(*corev1.Secret))
	}
	if v.ChartPullSecret != "" {
		sec, err := s.source(ctx, &corev1.Secret{}, v.ChartPullSecret, fmt.Sprintf("spec.versions[%q].chartPullSecret", v.Version), cfg.Name)
		if err != nil {
			return nil, err
		}
		r.chartSecret = sec.(*corev1.Secret)
	}
	if ref := v.ChartCABundleRef; ref != nil {
		ca, err := s.caBundle(ctx, ref, fmt.Sprintf("spec.versions[%q].chartCABundleRef", v.Version), cfg.Name)
		if err != nil {
			return nil, err
		}
		if err := flux.CheckCABundle(ca); err != nil {
			return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf(
				"ProviderConfig %q: spec.versions[%q].chartCABundleRef.key: ConfigMap %s/%s key %q: %v", cfg.Name, v.Version, s.PodNamespace, ref.Name, ref.Key, err)}
		}
		r.chartCA = ca
	}
	if ref := cfg.Spec.CABundleRef; ref != nil {
		ca, err := s.caBundle(ctx, ref, "spec.caBundleRef", cfg.Name)
		if err != nil {
			return nil, err
		}
		r.caBundle = ca
	}
	return r, nil
}

// caBundle reads the non-empty PEM bundle ref names in the provider's namespace; field is the
// path of ref in the ProviderConfig, for error messages.
func (s *Service) caBundle(ctx context.Context, ref *corev1.ConfigMapKeySelector, field, cfgName string) ([]byte, error) {
	cm, err := s.source(ctx, &corev1.ConfigMap{}, ref.Name, field, cfgName)
	if err != nil {
		return nil, err
	}
	data, ok := cm.(*corev1.ConfigMap).Data[ref.Key]
	if !ok || strings.TrimSpace(data) == "" {
		return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf(
			"ProviderConfig %q: %s.key: ConfigMap %s/%s has no key %q with a PEM bundle", cfgName, field, s.PodNamespace, ref.Name, ref.Key)}
	}
	return []byte(data), nil
}

// source reads a Secret or ConfigMap from the provider's namespace.
func (s *Service) source(ctx context.Context, obj client.Object, name, field, cfgName string) (client.Object, error) {
	if err := s.Platform.Get(ctx, client.ObjectKey{Namespace: s.PodNamespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			kind := "Secret"
			if _, ok := obj.(*corev1.ConfigMap); ok {
				kind = "ConfigMap"
			}
			return nil, &inputError{reason: spv1alpha1.ReasonInvalidConfiguration, msg: fmt.Sprintf(
				"ProviderConfig %q: %s: %s %s/%s not found in the provider namespace", cfgName, field, kind, s.PodNamespace, name)}
		}
		return nil, fmt.Errorf("reading %s from the provider namespace: %w", name, err)
	}
	return obj, nil
}
