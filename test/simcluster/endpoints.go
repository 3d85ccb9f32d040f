package simcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// EndpointsManagedBy is the endpointslice.kubernetes.io/managed-by value of the slices
// PublishEndpoints writes.
const EndpointsManagedBy = "simcluster"

// PublishEndpoints writes the endpoints of Service namespace/name, as the EndpointSlice controller
// would, from the Ready pods its selector matches: one address per pod (its pod IP), the Service's
// ports resolved to the pods' target ports. It returns the pod IPs published.
//
// Why: kwok gives pods loopback IPs (127.128.0.0/16, the network rule), and EndpointSlice
// validation rejects loopback addresses of type IPv4, so kube-controller-manager cannot publish
// them. The slice is written with addressType FQDN (a dotted IP is a valid FQDN) and is used by
// the API server's endpoint routing (Options.ServiceRouting), which dials the address as given.
// Call it again after the pods change.
func (c *Cluster) PublishEndpoints(ctx context.Context, namespace, name string) ([]string, error) {
	cfg := rest.CopyConfig(c.Config)
	// "FQDN endpoints are deprecated": known, see above.
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	svc, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return nil, err
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + EndpointsManagedBy, Namespace: namespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: EndpointsManagedBy}},
		AddressType: discoveryv1.AddressTypeFQDN,
	}
	var ips []string
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.PodIP == "" || pod.DeletionTimestamp != nil || !podReady(pod) {
			continue
		}
		ips = append(ips, pod.Status.PodIP)
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{pod.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(pod.Spec.NodeName),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: namespace, Name: pod.Name, UID: pod.UID},
		})
		if len(slice.Ports) == 0 {
			for _, sp := range svc.Spec.Ports {
				port, err := targetPort(pod, sp)
				if err != nil {
					return nil, fmt.Errorf("service %s/%s: %w", namespace, name, err)
				}
				slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{
					Name: ptr.To(sp.Name), Port: ptr.To(port), Protocol: ptr.To(sp.Protocol), AppProtocol: sp.AppProtocol})
			}
		}
	}
	existing, err := cs.DiscoveryV1().EndpointSlices(namespace).Get(ctx, slice.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cs.DiscoveryV1().EndpointSlices(namespace).Create(ctx, slice, metav1.CreateOptions{})
	case err == nil:
		slice.ResourceVersion = existing.ResourceVersion
		_, err = cs.DiscoveryV1().EndpointSlices(namespace).Update(ctx, slice, metav1.UpdateOptions{})
	}
	return ips, err
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// targetPort resolves a Service port's targetPort (number, name or empty) against pod.
func targetPort(pod *corev1.Pod, sp corev1.ServicePort) (int32, error) {
	switch {
	case sp.TargetPort.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == sp.TargetPort.StrVal {
					return p.ContainerPort, nil
				}
			}
		}
		return 0, fmt.Errorf("pod %s has no container port named %q", pod.Name, sp.TargetPort.StrVal)
	case sp.TargetPort.IntVal != 0:
		return sp.TargetPort.IntVal, nil
	}
	return sp.Port, nil
}
