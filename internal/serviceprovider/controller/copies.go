package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// copyLabels mark a copy and name its source (shortened to fit a label value; copyAnnotations
// keep the full name).
func copyLabels(id, source string) map[string]string {
	l := instance.Labels(id)
	l[instance.SourceLabel] = instance.SourceLabelValue(source)
	return l
}

// copyAnnotations name the source of a copy in full.
func copyAnnotations(source string) map[string]string {
	return map[string]string{instance.SourceAnnotation: source}
}

// secretCopy is the copy of src named name in namespace.
func secretCopy(src *corev1.Secret, name, namespace, id string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: copyLabels(id, src.Name), Annotations: copyAnnotations(src.Name)},
		Type:       src.Type,
		Data:       src.Data,
	}
}

// syncCopies makes the workload namespace hold exactly the pull secrets and the CA bundle asked
// for: copies are updated when their source changes and deleted when no longer referenced.
func syncCopies(ctx context.Context, c client.Client, id, ns string, pull []*corev1.Secret, caBundle []byte) error {
	want := map[string]bool{}
	for _, src := range pull {
		want[src.Name] = true
		if err := applyOwned(ctx, c, secretCopy(src, src.Name, ns, id), id, "workload cluster"); err != nil {
			return err
		}
	}
	var existing corev1.SecretList
	if err := c.List(ctx, &existing, client.InNamespace(ns), client.HasLabels{instance.SourceLabel}, client.MatchingLabels{instance.InstanceLabel: id}); err != nil {
		return fmt.Errorf("listing copied secrets in %s: %w", ns, err)
	}
	for i := range existing.Items {
		if s := &existing.Items[i]; !want[s.Name] {
			if _, err := removeOwned(ctx, c, s, id); err != nil {
				return err
			}
		}
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: instance.CABundleConfigMap, Namespace: ns, Labels: copyLabels(id, "caBundleRef")},
	}
	if caBundle == nil {
		_, err := removeOwned(ctx, c, cm, id)
		return err
	}
	cm.Data = map[string]string{flux.CABundleFile: string(caBundle)}
	return applyOwned(ctx, c, cm, id, "workload cluster")
}

// syncChartSecret keeps the platform copy of the chart pull secret next to the OCIRepository.
func syncChartSecret(ctx context.Context, c client.Client, name, id, ns string, src *corev1.Secret) error {
	dst := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: instance.ChartPullSecretName(name), Namespace: ns}}
	if src == nil {
		_, err := removeOwned(ctx, c, dst, id)
		return err
	}
	return applyOwned(ctx, c, secretCopy(src, dst.Name, ns, id), id, "platform cluster")
}

// syncChartCASecret keeps the platform Secret holding the registry's CA (key ca.crt, the key
// Flux's certSecretRef reads) next to the OCIRepository, and deletes it when ca is nil.
func syncChartCASecret(ctx context.Context, c client.Client, name, id, ns string, ca []byte) error {
	dst := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: instance.ChartCASecretName(name), Namespace: ns, Labels: copyLabels(id, "chartCABundleRef")},
		Type:       corev1.SecretTypeOpaque,
	}
	if ca == nil {
		_, err := removeOwned(ctx, c, dst, id)
		return err
	}
	dst.Data = map[string][]byte{flux.CAKey: ca}
	return applyOwned(ctx, c, dst, id, "platform cluster")
}
