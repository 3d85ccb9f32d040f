package collectors

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
)

// Desired is one collector as the OpAMP server wants it, parsed and checked.
type Desired struct {
	Key Key
	// Object is what is applied: apiVersion, kind, metadata (name, namespace, labels, annotations)
	// and spec, exactly as the server wrote them.
	Object *unstructured.Unstructured
	// create is set when no collector of that name exists yet.
	create bool
}

// ParseCollector parses a remote configuration file (a full v1beta1 OpenTelemetryCollector in
// YAML or JSON) for key and checks it: kind and version, name and namespace (empty or equal to the
// key's), no unknown fields, the bridge's labels and componentsAllowed.
func ParseCollector(key Key, body []byte, bridgeName string, allowed map[string][]string) (*Desired, error) {
	if len(body) == 0 {
		return nil, errors.New("the file is empty")
	}
	var typed v1beta1.OpenTelemetryCollector
	if err := yaml.UnmarshalStrict(body, &typed); err != nil {
		return nil, fmt.Errorf("not a valid v1beta1 OpenTelemetryCollector: %w", err)
	}
	if typed.APIVersion != "" && typed.APIVersion != v1beta1.GroupVersion.String() {
		return nil, fmt.Errorf("apiVersion %q: only %s is accepted", typed.APIVersion, v1beta1.GroupVersion)
	}
	if typed.Kind != "" && typed.Kind != "OpenTelemetryCollector" {
		return nil, fmt.Errorf("kind %q: want OpenTelemetryCollector", typed.Kind)
	}
	if typed.Name != "" && typed.Name != key.Name {
		return nil, fmt.Errorf("metadata.name %q differs from the key's name %q", typed.Name, key.Name)
	}
	if typed.Namespace != "" && typed.Namespace != key.Namespace {
		return nil, fmt.Errorf("metadata.namespace %q differs from the key's namespace %q", typed.Namespace, key.Namespace)
	}
	if err := CheckManaged(typed.Labels, bridgeName, "the new configuration"); err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	config, _ := spec["config"].(map[string]any)
	if err := CheckComponents(config, allowed); err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(v1beta1.GroupVersion.String())
	obj.SetKind("OpenTelemetryCollector")
	obj.SetName(key.Name)
	obj.SetNamespace(key.Namespace)
	obj.SetLabels(typed.Labels)
	obj.SetAnnotations(typed.Annotations)
	return &Desired{Key: key, Object: obj}, nil
}

// bridgeID identifies this bridge in BridgeAnnotation.
func (c *Client) bridgeID() string { return c.opts.BridgeNamespace + "/" + c.opts.BridgeName }

func (c *Client) inScope(ns string) bool {
	if len(c.opts.Namespaces) == 0 {
		return true
	}
	for _, n := range c.opts.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// ApplyAll makes the cluster match a remote configuration: files maps "namespace/name" keys to
// collector bodies. Every file is parsed, checked against the labels of the stored collector and
// dry-run applied first; if anything fails, nothing is changed and every error is returned.
// Then each collector is applied (server-side, field manager FieldManager). Only if every apply
// succeeded are the collectors this bridge created (by its own record, not by labels) that are no
// longer in files deleted.
func (c *Client) ApplyAll(ctx context.Context, files map[string][]byte) error {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var record map[string]string
	if c.opts.Record != nil {
		r, err := c.opts.Record.Created(ctx)
		if err != nil {
			return err
		}
		record = r
	}
	var errs []error
	var desired []*Desired
	wanted := map[Key]bool{}
	for _, ks := range keys {
		d, err := c.prepare(ctx, ks, files[ks], record)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ks, err))
			continue
		}
		desired = append(desired, d)
		wanted[d.Key] = true
	}
	stale, gone, err := c.staleCreations(ctx, wanted, record)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return joinErrors(errs)
	}
	for _, d := range desired {
		if err := c.apply(ctx, d, true); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Key, err))
		}
	}
	if len(errs) > 0 {
		return joinErrors(errs)
	}
	next := make(map[string]string, len(record))
	for k, v := range record {
		next[k] = v
	}
	for _, k := range gone {
		delete(next, k)
	}
	for _, d := range desired {
		if err := c.apply(ctx, d, false); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Key, err))
			continue
		}
		if d.create {
			var created v1beta1.OpenTelemetryCollector
			if err := c.writer.Get(ctx, client.ObjectKey{Namespace: d.Key.Namespace, Name: d.Key.Name}, &created); err == nil {
				next[d.Key.String()] = string(created.UID)
			} else {
				errs = append(errs, fmt.Errorf("%s: reading the created collector: %w", d.Key, err))
			}
		}
	}
	// A failed apply leaves the configuration half-applied: deleting now could remove a collector
	// whose replacement never came. Deletion waits for a configuration that applies completely.
	if len(errs) == 0 {
		for _, obj := range stale {
			err := c.writer.Delete(ctx, obj, client.Preconditions{UID: &obj.UID, ResourceVersion: &obj.ResourceVersion})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %s/%s: %w", obj.Namespace, obj.Name, err))
				continue
			}
			delete(next, Key{obj.Namespace, obj.Name}.String())
		}
	}
	if c.opts.Record != nil && !sameRecord(record, next) {
		if err := c.opts.Record.SetCreated(ctx, next); err != nil {
			errs = append(errs, fmt.Errorf("recording the collectors the bridge created: %w", err))
		}
	}
	return joinErrors(errs)
}

func sameRecord(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// prepare parses one file and checks it against the stored collector, read from the API server
// (not the filtered cache: an unlabelled collector must be seen to be refused). The creation
// marks (CreatedByLabel, BridgeAnnotation) are the bridge's to set: whatever the server wrote
// there is dropped, and they are set on collectors the bridge creates or recorded as created.
func (c *Client) prepare(ctx context.Context, ks string, body []byte, record map[string]string) (*Desired, error) {
	key, err := ParseKey(ks)
	if err != nil {
		return nil, err
	}
	if !c.inScope(key.Namespace) {
		return nil, fmt.Errorf("namespace %s is outside the bridge's namespaces %v", key.Namespace, c.opts.Namespaces)
	}
	d, err := ParseCollector(key, body, c.opts.BridgeName, c.opts.ComponentsAllowed)
	if err != nil {
		return nil, err
	}
	unmark(d.Object)
	var existing v1beta1.OpenTelemetryCollector
	err = c.writer.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, &existing)
	switch {
	case apierrors.IsNotFound(err):
		c.markCreated(d.Object)
		d.create = true
	case err != nil:
		return nil, err
	default:
		if err := CheckManaged(existing.Labels, c.opts.BridgeName, "the existing collector"); err != nil {
			return nil, err
		}
		if uid, ok := record[key.String()]; ok && uid == string(existing.UID) {
			// Keep the marks: leaving them out of the apply would remove them.
			c.markCreated(d.Object)
		}
	}
	return d, nil
}

// unmark removes the creation marks a server wrote into a collector body.
func unmark(obj *unstructured.Unstructured) {
	if l := obj.GetLabels(); l != nil {
		delete(l, CreatedByLabel)
		obj.SetLabels(l)
	}
	if a := obj.GetAnnotations(); a != nil {
		delete(a, BridgeAnnotation)
		obj.SetAnnotations(a)
	}
}

func (c *Client) markCreated(obj *unstructured.Unstructured) {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[CreatedByLabel] = CreatedByValue
	obj.SetLabels(l)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[BridgeAnnotation] = c.bridgeID()
	obj.SetAnnotations(a)
}

func (c *Client) apply(ctx context.Context, d *Desired, dryRun bool) error {
	opts := []client.ApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return c.writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(d.Object.DeepCopy()), opts...)
}

// staleCreations returns the recorded creations that are not wanted and still exist with the
// recorded UID and the bridge's managed label, read from the API server; and the recorded keys
// that no longer name the recorded collector (deleted or replaced by hand), to forget.
func (c *Client) staleCreations(ctx context.Context, wanted map[Key]bool, record map[string]string) ([]*v1beta1.OpenTelemetryCollector, []string, error) {
	var out []*v1beta1.OpenTelemetryCollector
	var gone []string
	var errs []error
	for ks, uid := range record {
		key, err := ParseKey(ks)
		if err != nil {
			gone = append(gone, ks)
			continue
		}
		if wanted[key] || !c.inScope(key.Namespace) {
			continue
		}
		o := &v1beta1.OpenTelemetryCollector{}
		err = c.writer.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, o)
		switch {
		case apierrors.IsNotFound(err):
			gone = append(gone, ks)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("reading %s: %w", ks, err))
			continue
		}
		if string(o.UID) != uid {
			gone = append(gone, ks) // replaced by another collector of the same name
			continue
		}
		if CheckManaged(o.Labels, c.opts.BridgeName, "") != nil {
			continue // relabelled by hand: no longer the bridge's to delete
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		return Key{out[i].Namespace, out[i].Name}.String() < Key{out[j].Namespace, out[j].Name}.String()
	})
	return out, gone, joinErrors(errs)
}
