package injectdiff

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sideLabel is the namespace label that routes a namespace's pods and Instrumentations to one
// operator's webhooks; its value is the side ("upstream" or "otelop").
const sideLabel = "injectdiff.otelop.io/webhooks"

// installWebhooks registers, from one operator's webhook manifests (config/webhook/manifests.yaml
// of its repository), the webhooks for pods and Instrumentations, and only those: renamed
// injectdiff-<side>-<name>, called at https://127.0.0.1:<port><path> with caBundle ca, and
// limited to namespaces labelled sideLabel=side. The pod webhook's failurePolicy becomes Fail, so
// that an operator that cannot be reached fails the test instead of admitting pods unchanged.
// It returns how many webhooks it registered.
func installWebhooks(ctx context.Context, c client.Client, side, manifestsPath string, port int, ca []byte) (int, error) {
	data, err := os.ReadFile(manifestsPath)
	if err != nil {
		return 0, err
	}
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	n := 0
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, fmt.Errorf("%s: %w", manifestsPath, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetName("injdiff-" + side + "-" + u.GetName())
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		var kept []any
		for _, h := range hooks {
			hook := h.(map[string]any)
			res := webhookResources(hook)
			if !slices.Contains(res, "pods") && !slices.Contains(res, "instrumentations") {
				continue
			}
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			hook["clientConfig"] = map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(ca)}
			hook["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{sideLabel: side}}
			if slices.Contains(res, "pods") {
				hook["failurePolicy"] = "Fail"
			}
			kept = append(kept, hook)
		}
		if len(kept) == 0 {
			continue
		}
		if err := unstructured.SetNestedSlice(u.Object, kept, "webhooks"); err != nil {
			return 0, err
		}
		if err := c.Create(ctx, u); err != nil {
			return 0, fmt.Errorf("installing %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		n += len(kept)
	}
	return n, nil
}

// webhookResources lists the resources of a webhook's rules.
func webhookResources(hook map[string]any) []string {
	rules, _, _ := unstructured.NestedSlice(hook, "rules")
	var out []string
	for _, r := range rules {
		res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
		out = append(out, res...)
	}
	return out
}
