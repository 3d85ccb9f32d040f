// Package identity keeps the bridge's OpAMP identity across restarts and replicas: its instance
// UID (a UUIDv7 made once) and the last remote configuration status, in a ConfigMap in the
// bridge's namespace. Upstream makes a new UID at every start, so each restart looks like a new
// agent to the server and the last applied hash is forgotten.
package identity

import (
	"context"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/protobufs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Data keys of the ConfigMap.
const (
	keyUID    = "instanceUID"
	keyHash   = "lastRemoteConfigHash"
	keyStatus = "lastRemoteConfigStatus"
	keyError  = "lastRemoteConfigError"
	// keyCreated lists the collectors the bridge created, one "namespace/name uid" a line: the
	// bridge deletes only these, never what labels say it created (an OpAMP server can write
	// labels; it cannot write this ConfigMap).
	keyCreated = "createdCollectors"
	// MaxErrorBytes bounds the stored error message, so that any error fits in the ConfigMap.
	MaxErrorBytes = 32 << 10
	// FieldManager is the field manager used for the ConfigMap.
	FieldManager = "operator-opamp-bridge"
)

// Store reads and writes the identity ConfigMap.
type Store struct {
	c         client.Client
	namespace string
	name      string
	owner     *metav1.OwnerReference
}

// ManagedByLabel and ManagedByValue mark the objects the bridge creates for itself (the identity
// ConfigMap and the leader-election Lease).
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "operator-opamp-bridge"
)

// LeaseName is the leader-election Lease of the bridge called bridgeName.
func LeaseName(bridgeName string) string { return bridgeName + "-opamp-bridge" }

// FindOwner returns an owner reference to the OpAMPBridge resource that runs the bridge called
// bridgeName, or nil: the controller of the ConfigMap the operator generated for it
// (generatedConfigMap, which holds the bridge's configuration file), when that controller is an
// OpAMPBridge of the same name. A bridge deployed without the operator has none.
func FindOwner(ctx context.Context, c client.Reader, namespace, bridgeName, generatedConfigMap string) (*metav1.OwnerReference, error) {
	var cm metav1.PartialObjectMetadata
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: generatedConfigMap}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	ref := metav1.GetControllerOf(&cm)
	if ref == nil || ref.Kind != "OpAMPBridge" || ref.Name != bridgeName || !strings.HasPrefix(ref.APIVersion, "opentelemetry.io/") {
		return nil, nil
	}
	return &metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}, nil
}

// HasOwner reports whether obj lists ref (by UID) among its owners.
func HasOwner(obj metav1.Object, ref *metav1.OwnerReference) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == ref.UID {
			return true
		}
	}
	return false
}

// SetOwner makes the ConfigMap owned by ref (not as controller), so that it is garbage
// collected with the OpAMPBridge resource.
func (s *Store) SetOwner(ref *metav1.OwnerReference) { s.owner = ref }

// ConfigMapName is the name of the identity ConfigMap of the bridge called bridgeName.
func ConfigMapName(bridgeName string) string { return bridgeName + "-opamp-bridge-identity" }

// New returns a Store for the bridge bridgeName in namespace.
func New(c client.Client, namespace, bridgeName string) *Store {
	return &Store{c: c, namespace: namespace, name: ConfigMapName(bridgeName)}
}

// State is what the store holds.
type State struct {
	// UID is the agent's instance UID.
	UID uuid.UUID
	// RemoteConfigStatus is the last status reported, or nil.
	RemoteConfigStatus *protobufs.RemoteConfigStatus
}

// Load returns the stored state, creating the ConfigMap with a new UUIDv7 on first use. Replicas
// that race to create it end up with the same UID.
func (s *Store) Load(ctx context.Context) (State, error) {
	for range 3 {
		var cm corev1.ConfigMap
		err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.name}, &cm)
		if err == nil {
			if s.owner != nil && !HasOwner(&cm, s.owner) {
				if err := s.addOwner(ctx); err != nil {
					return State{}, fmt.Errorf("adding the owner reference to ConfigMap %s/%s: %w", s.namespace, s.name, err)
				}
			}
			return decode(&cm)
		}
		if !apierrors.IsNotFound(err) {
			return State{}, fmt.Errorf("reading ConfigMap %s/%s: %w", s.namespace, s.name, err)
		}
		uid, err := uuid.NewV7()
		if err != nil {
			return State{}, err
		}
		cm = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.name, Labels: map[string]string{
				ManagedByLabel: ManagedByValue,
			}},
			Data: map[string]string{keyUID: uid.String()},
		}
		if s.owner != nil {
			cm.OwnerReferences = []metav1.OwnerReference{*s.owner}
		}
		err = s.c.Create(ctx, &cm, client.FieldOwner(FieldManager))
		if err == nil {
			return State{UID: uid}, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return State{}, fmt.Errorf("creating ConfigMap %s/%s: %w", s.namespace, s.name, err)
		}
	}
	return State{}, fmt.Errorf("ConfigMap %s/%s: could not create or read it", s.namespace, s.name)
}

// addOwner adds the owner reference to an existing ConfigMap (server-side apply of that list
// entry only).
func (s *Store) addOwner(ctx context.Context) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": s.name, "namespace": s.namespace, "ownerReferences": []any{map[string]any{
			"apiVersion": s.owner.APIVersion, "kind": s.owner.Kind, "name": s.owner.Name, "uid": string(s.owner.UID),
		}}},
	}}
	return s.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager+"-owner"), client.ForceOwnership)
}

func decode(cm *corev1.ConfigMap) (State, error) {
	uid, err := uuid.Parse(cm.Data[keyUID])
	if err != nil {
		return State{}, fmt.Errorf("ConfigMap %s/%s: %s: %w", cm.Namespace, cm.Name, keyUID, err)
	}
	st := State{UID: uid}
	if h := cm.Data[keyHash]; h != "" {
		hash, err := hex.DecodeString(h)
		if err == nil {
			st.RemoteConfigStatus = &protobufs.RemoteConfigStatus{
				LastRemoteConfigHash: hash,
				Status:               protobufs.RemoteConfigStatuses(protobufs.RemoteConfigStatuses_value[cm.Data[keyStatus]]),
				ErrorMessage:         cm.Data[keyError],
			}
		}
	}
	return st, nil
}

// SaveRemoteConfigStatus records the last remote configuration status (server-side apply of the
// three status keys only).
func (s *Store) SaveRemoteConfigStatus(ctx context.Context, st *protobufs.RemoteConfigStatus) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": s.name, "namespace": s.namespace},
		"data": map[string]any{
			keyHash:   hex.EncodeToString(st.GetLastRemoteConfigHash()),
			keyStatus: st.GetStatus().String(),
			keyError:  Truncate(st.GetErrorMessage(), MaxErrorBytes),
		},
	}}
	return s.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager+"-status"), client.ForceOwnership)
}

// Truncate shortens msg to at most n bytes (on a UTF-8 boundary), saying how much was cut.
func Truncate(msg string, n int) string {
	if len(msg) <= n {
		return msg
	}
	suffix := fmt.Sprintf("... (%d more bytes)", len(msg))
	cut := n - len(suffix)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:max(cut, 0)] + suffix
}

// Created returns the collectors this bridge created, "namespace/name" to UID, read from the API
// server.
func (s *Store) Created(ctx context.Context) (map[string]string, error) {
	var cm corev1.ConfigMap
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.name}, &cm); err != nil {
		return nil, fmt.Errorf("reading the bridge's record of created collectors (ConfigMap %s/%s): %w", s.namespace, s.name, err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(cm.Data[keyCreated], "\n") {
		key, uid, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && key != "" && uid != "" {
			out[key] = uid
		}
	}
	return out, nil
}

// SetCreated replaces the record of created collectors (server-side apply of that key only).
func (s *Store) SetCreated(ctx context.Context, created map[string]string) error {
	keys := make([]string, 0, len(created))
	for k := range created {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + " " + created[k] + "\n")
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": s.name, "namespace": s.namespace},
		"data":     map[string]any{keyCreated: b.String()},
	}}
	return s.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager+"-created"), client.ForceOwnership)
}
