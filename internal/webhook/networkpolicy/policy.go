// Package networkpolicy keeps the NetworkPolicy that limits who reaches the operator's webhook port
// (the operator.networkpolicy feature gate). The pod webhook cannot tell an AdmissionReview the
// API server sent from one any pod posts straight to the port, so the port is opened only to the
// API server: by default to the addresses of the API server's endpoints (the EndpointSlices of
// the default/kubernetes Service) and to pods of kube-system (where managed control planes run
// the konnectivity agents that carry the API server's calls into the cluster), or to the peers
// an administrator names. Every other port of the operator's pods stays open to all: the policy
// changes nothing but the webhook port.
//
// Whether the API server's calls really come from those addresses depends on the cluster (a
// CNI may rewrite the source, a control plane may call from elsewhere), so the default is
// verified: after applying it, the keeper checks that the API server still reaches the webhook
// (a dry-run create through the Instrumentation defaulting webhook). If it does not, the keeper
// opens the webhook port again (upstream's behaviour: no policy limits it), logs why and records
// the outcome on the NetworkPolicy, and does not try those peers again until they change. Peers
// an administrator names are kept even when the check fails (logged as an error).
package networkpolicy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Annotations on the NetworkPolicy.
const (
	// StateAnnotation is Restricted or Open.
	StateAnnotation = "operator.opentelemetry.io/webhook-policy"
	// PeersAnnotation is the hash of the peers the state was decided for.
	PeersAnnotation = "operator.opentelemetry.io/webhook-policy-peers"
	// Restricted: the webhook port admits only the peers.
	Restricted = "restricted"
	// Open: the API server did not reach the webhook through the peers; the port admits everyone.
	Open = "open"
)

// DefaultName is the NetworkPolicy's name in the operator's namespace.
const DefaultName = "opentelemetry-operator-webhook"

// FieldOwner is the field manager of the NetworkPolicy.
const FieldOwner = "opentelemetry-operator"

// Keeper applies the webhook NetworkPolicy and verifies it. It is a manager runnable.
type Keeper struct {
	// Client writes the NetworkPolicy (server-side apply).
	Client client.Client
	// Reader reads the webhook Service, the API server's EndpointSlices and the NetworkPolicy,
	// uncached.
	Reader client.Reader
	// Namespace is the operator's namespace (the webhook Service's).
	Namespace string
	// ServiceName is the webhook Service: its selector selects the pods the policy applies to.
	ServiceName string
	// Name of the NetworkPolicy; empty means DefaultName.
	Name string
	// WebhookPort is the port the webhook server listens on in the pod.
	WebhookPort int32
	// From are the peers an administrator named; nil means the default (the API server's
	// endpoints and kube-system), verified.
	From []networkingv1.NetworkPolicyPeer
	// Reached reports whether the API server reaches the webhook now.
	Reached func(context.Context) error
	// Settle is how long a new policy is given to take effect before Reached is asked (CNIs apply
	// policies asynchronously); Attempts is how many times Reached is asked before the policy is
	// judged (a call may land on a replica that is restarting).
	Settle   time.Duration
	Attempts int
	// Interval is how often the peers are recomputed (the API server's addresses can change).
	Interval time.Duration
}

// NeedLeaderElection: one replica decides (the policy covers every replica).
func (k *Keeper) NeedLeaderElection() bool { return true }

// Start runs Sync now and every Interval until ctx ends. Errors are logged and retried after 30 s,
// doubling up to Interval.
func (k *Keeper) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("webhook-networkpolicy")
	ctx = logf.IntoContext(ctx, log)
	interval := k.Interval
	if interval <= 0 {
		interval = 10 * time.Minute
	}
	retry := 30 * time.Second
	for {
		wait := interval
		if _, err := k.Sync(ctx); err != nil {
			wait = min(interval, retry)
			retry = min(2*retry, interval) // a lasting error (no RBAC, say) is not logged every 30 s
			log.Error(err, "webhook NetworkPolicy not decided; retrying", "in", wait.String())
		} else {
			retry = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sync brings the policy in line with the current peers and returns its state (Restricted or
// Open).
func (k *Keeper) Sync(ctx context.Context) (string, error) {
	log := logf.FromContext(ctx)
	svc := &corev1.Service{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.ServiceName}, svc); err != nil {
		return "", fmt.Errorf("reading the webhook Service %s/%s (its selector selects the operator's pods): %w", k.Namespace, k.ServiceName, err)
	}
	if len(svc.Spec.Selector) == 0 {
		return "", fmt.Errorf("the webhook Service %s/%s has no selector", k.Namespace, k.ServiceName)
	}
	explicit := k.From != nil
	peers := k.From
	if !explicit {
		var err error
		if peers, err = k.defaultPeers(ctx); err != nil {
			return "", err
		}
	}
	hash := hashPeers(peers)
	current := &networkingv1.NetworkPolicy{}
	err := k.Reader.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.name()}, current)
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("reading NetworkPolicy %s/%s: %w", k.Namespace, k.name(), err)
	}
	if err != nil {
		current = nil
	}
	if current != nil && current.Annotations[PeersAnnotation] == hash && !explicit {
		// Decided before for these peers: keep the decision (no new check, no outage).
		state := current.Annotations[StateAnnotation]
		if state == Restricted || state == Open {
			return state, k.apply(ctx, current, svc.Spec.Selector, peers, state, hash)
		}
	}
	if !explicit {
		// The webhook must work before a policy can be judged by it (at start-up the serving
		// certificate may not be in place yet). A policy of other peers that blocks the API server
		// now (its addresses changed) is opened first, undecided.
		if err := k.Reached(ctx); err != nil {
			if current != nil && current.Annotations[StateAnnotation] == Restricted {
				if aerr := k.apply(ctx, current, svc.Spec.Selector, peers, Open, ""); aerr != nil {
					return "", aerr
				}
			}
			return "", fmt.Errorf("the API server does not reach the webhook now, so no policy can be verified: %w", err)
		}
	}
	if err := k.apply(ctx, current, svc.Spec.Selector, peers, Restricted, hash); err != nil {
		return "", err
	}
	if reachErr := k.check(ctx); reachErr != nil {
		if explicit {
			log.Error(reachErr, "the API server does not reach the webhook through the configured --webhook-network-policy-from peers; kept as configured")
			return Restricted, nil
		}
		log.Error(reachErr, "the API server does not reach the webhook from its endpoints' addresses or kube-system; "+
			"the webhook port is left open to every pod. Name the peers the API server calls from with --webhook-network-policy-from", "peers", peers)
		if err := k.apply(ctx, current, svc.Spec.Selector, peers, Open, hash); err != nil {
			return "", err
		}
		return Open, nil
	}
	log.Info("the webhook port admits only the API server", "peers", peers)
	return Restricted, nil
}

func (k *Keeper) name() string {
	if k.Name == "" {
		return DefaultName
	}
	return k.Name
}

// check asks Reached up to Attempts times, Settle apart (the first after Settle).
func (k *Keeper) check(ctx context.Context) error {
	attempts := max(k.Attempts, 1)
	var err error
	for range attempts {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(k.Settle):
		}
		if err = k.Reached(ctx); err == nil {
			return nil
		}
	}
	return err
}

// defaultPeers are the addresses of the default/kubernetes Service's endpoints (one /32 or /128
// each) and kube-system's pods.
func (k *Keeper) defaultPeers(ctx context.Context) ([]networkingv1.NetworkPolicyPeer, error) {
	eps := &discoveryv1.EndpointSliceList{}
	if err := k.Reader.List(ctx, eps, client.InNamespace(metav1.NamespaceDefault),
		client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"}); err != nil {
		return nil, fmt.Errorf("listing the API server's EndpointSlices (default/kubernetes): %w", err)
	}
	var cidrs []string
	for _, s := range eps.Items {
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil {
					continue
				}
				cidrs = append(cidrs, netip.PrefixFrom(ip, ip.BitLen()).String())
			}
		}
	}
	slices.Sort(cidrs)
	cidrs = slices.Compact(cidrs)
	if len(cidrs) == 0 {
		return nil, fmt.Errorf("the API server's EndpointSlices (default/kubernetes) list no address")
	}
	peers := make([]networkingv1.NetworkPolicyPeer, 0, len(cidrs)+1)
	for _, c := range cidrs {
		peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	peers = append(peers, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{corev1.LabelMetadataName: metav1.NamespaceSystem}}})
	return peers, nil
}

// apply writes the policy in state unless current (the live one, nil when there is none) is it
// already; current becomes the written policy.
func (k *Keeper) apply(ctx context.Context, current *networkingv1.NetworkPolicy, selector map[string]string, peers []networkingv1.NetworkPolicyPeer, state, hash string) error {
	np := Build(k.Namespace, k.name(), selector, k.WebhookPort, peers, state == Open)
	np.Annotations = map[string]string{StateAnnotation: state, PeersAnnotation: hash}
	if current != nil && current.Annotations[StateAnnotation] == state && current.Annotations[PeersAnnotation] == hash &&
		equality.Semantic.DeepEqual(current.Spec, np.Spec) {
		return nil // in place: no write (an operator restart writes nothing)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(np)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: u}
	if err := k.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying NetworkPolicy %s/%s: %w", k.Namespace, k.name(), err)
	}
	if current != nil {
		*current = *np
	}
	return nil
}

// Build returns the NetworkPolicy for the pods selector selects: ingress to webhookPort (TCP) only
// from peers (from anywhere when open), every other port from anywhere.
func Build(namespace, name string, selector map[string]string, webhookPort int32, peers []networkingv1.NetworkPolicyPeer, open bool) *networkingv1.NetworkPolicy {
	tcp, udp, sctp := corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP
	webhook := networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromInt32(webhookPort))}},
		From:  peers,
	}
	if open {
		webhook.From = nil
	}
	var others []networkingv1.NetworkPolicyPort
	portRange := func(p *corev1.Protocol, from, to int32) {
		if from > to {
			return
		}
		port := networkingv1.NetworkPolicyPort{Protocol: p, Port: ptr.To(intstr.FromInt32(from))}
		if to > from {
			port.EndPort = ptr.To(to)
		}
		others = append(others, port)
	}
	portRange(&tcp, 1, webhookPort-1)
	portRange(&tcp, webhookPort+1, 65535)
	portRange(&udp, 1, 65535)
	portRange(&sctp, 1, 65535)
	return &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		// No managed-by label: the collector controllers' caches and pruning select on it.
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{webhook, {Ports: others}},
		},
	}
}

func hashPeers(peers []networkingv1.NetworkPolicyPeer) string {
	b, _ := json.Marshal(peers)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
