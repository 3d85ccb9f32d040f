package collectors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
)

// Desired is one collector as the OpAMP server wants it, parsed and checked.
type Desired struct {
	Key Key
	// Object is what is applied to an existing collector: apiVersion, kind, metadata (name,
	// namespace, labels, annotations) and spec, as the server wrote them.
	Object *unstructured.Unstructured
	typed  *v1beta1.OpenTelemetryCollector
	// create is set when no collector of that name exists yet: then the collector is created
	// from createObject, never applied.
	create bool
	// upgrade is set when the existing collector still has the Update entry of the bridge's
	// create in its managedFields.
	upgrade bool
}

// Rules are what ParseCollector checks a collector against.
type Rules struct {
	// Bridge is the bridge the collector must be labelled for.
	Bridge Bridge
	// ComponentsAllowed restricts the components of spec.config.
	ComponentsAllowed map[string][]string
}

// ParseCollector parses a remote configuration file (a full v1beta1 OpenTelemetryCollector in
// YAML or JSON) for key and checks it: kind and version, name and namespace (empty or equal to the
// key's), no unknown fields, the bridge's labels and componentsAllowed. What it may change
// against the cluster is checked later (checkChanges).
func ParseCollector(key Key, body []byte, rules Rules) (*Desired, error) {
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
	if err := CheckManaged(typed.Labels, rules.Bridge, key.Namespace, "the new configuration"); err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	config, _ := spec["config"].(map[string]any)
	if err := CheckComponents(config, rules.ComponentsAllowed); err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(v1beta1.GroupVersion.String())
	obj.SetKind("OpenTelemetryCollector")
	obj.SetName(key.Name)
	obj.SetNamespace(key.Namespace)
	obj.SetLabels(typed.Labels)
	obj.SetAnnotations(typed.Annotations)
	return &Desired{Key: key, Object: obj, typed: &typed}, nil
}

// createObject is what a new collector is created from: the managed label, spec.config and
// spec.upgradeStrategy, plus the writable spec fields the server set; the API server defaults
// the rest.
func (d *Desired) createObject(writable []string) *unstructured.Unstructured {
	spec, _ := d.Object.Object["spec"].(map[string]any)
	out := map[string]any{}
	for _, k := range append(slices.Clone(alwaysWritable), writable...) {
		if v, ok := spec[k]; ok {
			out[k] = v
		}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": out}}
	obj.SetAPIVersion(v1beta1.GroupVersion.String())
	obj.SetKind("OpenTelemetryCollector")
	obj.SetName(d.Key.Name)
	obj.SetNamespace(d.Key.Namespace)
	obj.SetLabels(map[string]string{ManagedLabel: d.Object.GetLabels()[ManagedLabel]})
	return obj
}

// bridgeID identifies this bridge in BridgeAnnotation.
func (c *Client) bridgeID() string { return c.opts.BridgeNamespace + "/" + c.opts.BridgeName }

func (c *Client) bridge() Bridge {
	return Bridge{Namespace: c.opts.BridgeNamespace, Name: c.opts.BridgeName}
}

// inScope says whether the bridge reports on collectors in ns: Namespaces, or all.
func (c *Client) inScope(ns string) bool {
	return len(c.opts.Namespaces) == 0 || slices.Contains(c.opts.Namespaces, ns)
}

// mayChange says whether the bridge may change collectors in ns: Namespaces, or only the
// bridge's own namespace.
func (c *Client) mayChange(ns string) bool {
	if len(c.opts.Namespaces) == 0 {
		return ns == c.opts.BridgeNamespace
	}
	return slices.Contains(c.opts.Namespaces, ns)
}

func (c *Client) changeScope() []string {
	if len(c.opts.Namespaces) == 0 {
		return []string{c.opts.BridgeNamespace}
	}
	return c.opts.Namespaces
}

// ApplyAll makes the cluster match a remote configuration: files maps "namespace/name" keys to
// collector bodies. Every file is parsed, checked against the labels and fields of the stored
// collector (checkChanges) and dry-run written first; if anything fails, nothing is changed and every error is returned.
// Then each new collector is created, and each existing one applied (server-side, field manager
// FieldManager). Only if every write succeeded are the collectors this bridge created (by its own record, not by labels) that are no
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
		if err := c.write(ctx, d, true); err != nil {
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
		if err := c.write(ctx, d, false); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Key, err))
			continue
		}
		if d.create {
			next[d.Key.String()] = string(d.Object.GetUID())
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
// A new collector is checked against the API server's defaults in write's dry run.
func (c *Client) prepare(ctx context.Context, ks string, body []byte, record map[string]string) (*Desired, error) {
	key, err := ParseKey(ks)
	if err != nil {
		return nil, err
	}
	if !c.mayChange(key.Namespace) {
		return nil, fmt.Errorf("namespace %s is outside the bridge's namespaces %v (the namespaces it may change)", key.Namespace, c.changeScope())
	}
	d, err := ParseCollector(key, body, Rules{Bridge: c.bridge(), ComponentsAllowed: c.opts.ComponentsAllowed})
	if err != nil {
		return nil, err
	}
	unmark(d.Object)
	var existing v1beta1.OpenTelemetryCollector
	err = c.writer.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, &existing)
	switch {
	case apierrors.IsNotFound(err):
		d.create = true
	case err != nil:
		return nil, err
	default:
		if err := CheckManaged(existing.Labels, c.bridge(), key.Namespace, "the existing collector"); err != nil {
			return nil, err
		}
		if err := checkChanges(d, &existing, c.opts.Writable); err != nil {
			return nil, err
		}
		if uid, ok := record[key.String()]; ok && uid == string(existing.UID) {
			// Keep the marks: leaving them out of the apply would remove them.
			c.markCreated(d.Object)
		}
		d.upgrade = hasCreateEntry(&existing)
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

// write creates a new collector or applies an existing one (dryRun: only checks). A new one is
// created from createObject, so that a collector somebody else created meanwhile makes the
// create fail instead of being taken over; its dry run returns the API server's defaults, which
// the server's other fields must equal.
func (c *Client) write(ctx context.Context, d *Desired, dryRun bool) error {
	if d.create {
		obj := d.createObject(c.opts.Writable)
		c.markCreated(obj)
		opts := []client.CreateOption{client.FieldOwner(FieldManager)}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		err := c.writer.Create(ctx, obj, opts...)
		if apierrors.IsAlreadyExists(err) {
			return errors.New("a collector of this name was created by someone else meanwhile; the bridge does not take it over")
		}
		if err != nil {
			return err
		}
		if dryRun {
			var defaulted v1beta1.OpenTelemetryCollector
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &defaulted); err != nil {
				return err
			}
			return checkChanges(d, &defaulted, c.opts.Writable)
		}
		d.Object.SetUID(obj.GetUID())
		return nil
	}
	if d.upgrade && !dryRun {
		if err := c.upgradeCreateEntry(ctx, d.Key); err != nil {
			return err
		}
	}
	opts := []client.ApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return c.writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(d.Object.DeepCopy()), opts...)
}

// hasCreateEntry reports whether the bridge's create left its Update entry in o's managedFields.
func hasCreateEntry(o client.Object) bool {
	for _, e := range o.GetManagedFields() {
		if e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}

// upgradeCreateEntry turns the Update entry of the bridge's create into its Apply entry
// (client-go's csaupgrade), so that the fields the create set are the bridge's applied fields:
// a later configuration that drops one removes it.
func (c *Client) upgradeCreateEntry(ctx context.Context, key Key) error {
	full := &unstructured.Unstructured{}
	full.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("OpenTelemetryCollector"))
	if err := c.writer.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, full); err != nil {
		return err
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(full, sets.New(FieldManager), FieldManager)
	if err != nil || patch == nil {
		return err
	}
	return c.writer.Patch(ctx, full, client.RawPatch(types.JSONPatchType, patch))
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
		if wanted[key] || !c.mayChange(key.Namespace) {
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
		if CheckManaged(o.Labels, c.bridge(), o.Namespace, "") != nil {
			continue // relabelled by hand: no longer the bridge's to delete
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		return Key{out[i].Namespace, out[i].Name}.String() < Key{out[j].Namespace, out[j].Name}.String()
	})
	return out, gone, joinErrors(errs)
}
