package simcluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WebhookNamePrefix is what the operator's install adds to the webhook configuration names
// (kustomize namePrefix), so the operator's CA injection finds them under its default names.
const WebhookNamePrefix = "opentelemetry-operator-"

// InstallWebhooks registers the operator's admission webhooks for an operator running as a local
// process: it reads the webhook configurations in manifestsPath (config/webhook/manifests.yaml),
// prefixes their names with WebhookNamePrefix, points every webhook at
// https://127.0.0.1:<port><path> instead of a Service, and switches the conversion of the named
// CRDs to https://127.0.0.1:<port>/convert. The operator (--webhook-cert-mode=self) injects the CA
// bundles; until then the API server refuses the calls, so callers retry their first writes.
func InstallWebhooks(ctx context.Context, cfg *rest.Config, manifestsPath string, port int, crds []string) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	data, err := os.ReadFile(manifestsPath)
	if err != nil {
		return err
	}
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("%s: %w", manifestsPath, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetName(WebhookNamePrefix + u.GetName())
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for i := range hooks {
			h := hooks[i].(map[string]any)
			path, _, _ := unstructured.NestedString(h, "clientConfig", "service", "path")
			h["clientConfig"] = map[string]any{"url": base + path}
		}
		if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
			return err
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("simcluster"), client.ForceOwnership); err != nil {
			return fmt.Errorf("installing %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return RouteConversion(ctx, c, "simcluster-conversion", port, nil, crds...)
}

// RouteConversion switches the conversion of the named CRDs to the webhook at
// https://127.0.0.1:<port>/convert, applied as fieldOwner; ca, when set, is its caBundle (else the
// operator injects it). A CRD has one conversion webhook for the whole cluster.
func RouteConversion(ctx context.Context, c client.Client, fieldOwner string, port int, ca []byte, crds ...string) error {
	clientConfig := map[string]any{"url": "https://127.0.0.1:" + strconv.Itoa(port) + "/convert"}
	if len(ca) > 0 {
		clientConfig["caBundle"] = base64.StdEncoding.EncodeToString(ca)
	}
	for _, name := range crds {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"conversion": map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"clientConfig":             clientConfig,
					"conversionReviewVersions": []any{"v1"},
				},
			}},
		}}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("routing the conversion of CRD %s: %w", name, err)
		}
	}
	return nil
}

// OperatorWebhookFlags are the operator flags that match InstallWebhooks for a local process:
// the webhook server on 127.0.0.1:port with a self-managed certificate for 127.0.0.1, kept in
// certDir and in a Secret in namespace.
func OperatorWebhookFlags(port int, certDir, namespace string) []string {
	return []string{
		"--webhook-host=127.0.0.1", "--webhook-port=" + strconv.Itoa(port),
		"--webhook-cert-mode=self", "--webhook-cert-namespace=" + namespace,
		"--webhook-cert-dir=" + certDir, "--webhook-cert-extra-ips=127.0.0.1",
		"--webhook-cert-extra-dns-names=localhost",
	}
}
