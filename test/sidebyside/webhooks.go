package sidebyside

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

// Routing says which of one operator's webhooks to register and where they send requests.
type Routing struct {
	// Prefix and Side name the configurations <Prefix>-<Side>-<name>.
	Prefix, Side string
	// Label is the namespace label whose value Side routes a namespace to these webhooks.
	Label string
	// ManifestsPath is the operator's config/webhook/manifests.yaml.
	ManifestsPath string
	// Port and CA: the webhooks are called at https://127.0.0.1:<Port><path> with caBundle CA.
	Port int
	CA   []byte
	// Resources selects the webhooks whose rules name one of them; FailResources those whose
	// failurePolicy becomes Fail, so that an operator that cannot be reached fails the test instead
	// of admitting objects unchanged.
	Resources, FailResources []string
}

// InstallWebhooks registers, from one operator's webhook manifests, the webhooks r selects, and
// only those: renamed, pointed at 127.0.0.1, and limited to namespaces labelled r.Label=r.Side.
// It returns how many webhooks it registered.
func InstallWebhooks(ctx context.Context, c client.Client, r Routing) (int, error) {
	data, err := os.ReadFile(r.ManifestsPath)
	if err != nil {
		return 0, err
	}
	base := "https://127.0.0.1:" + strconv.Itoa(r.Port)
	n := 0
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, fmt.Errorf("%s: %w", r.ManifestsPath, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetName(r.Prefix + "-" + r.Side + "-" + u.GetName())
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		var kept []any
		for _, h := range hooks {
			hook := h.(map[string]any)
			res := webhookResources(hook)
			if !slices.ContainsFunc(r.Resources, func(s string) bool { return slices.Contains(res, s) }) {
				continue
			}
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			hook["clientConfig"] = map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(r.CA)}
			hook["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{r.Label: r.Side}}
			if slices.ContainsFunc(r.FailResources, func(s string) bool { return slices.Contains(res, s) }) {
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
