package realnode_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/opampbridge/bridge"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
	"github.com/otelop/otelop/test/realnode"
)

// bridgeImageRepo is the name the bridge's image gets on the node (tag "1"); the operator runs
// it as its default bridge image.
const bridgeImageRepo = "otelop.test/operator-opamp-bridge"

// bridgeImage is the build of the bridge's image (as `make images` builds it), started by setup.
var bridgeImage imageBuild

// rolloutBound bounds the rollout after the spec change: two pods, each ready within a
// readiness period or two (10 s), plus the Lease hand-over (the leaving leader releases it).
const rolloutBound = 60 * time.Second

// TestOpAMPBridgeRollsWithTwoReplicas (issue 31, finding 2): an OpAMPBridge with 2 replicas (leader
// election) becomes available, and a change of its spec rolls to the end: every replica of the
// new template is updated and available, the old ones are gone, the Lease is held by a new pod,
// and that pod serves the new configuration to the OpAMP server (a changed non-identifying
// attribute of the bridge's agent description). With only the leader ready, the surge pod (a
// standby) was never ready and the rollout never finished.
//
// The bridge pods reach the API server at the node's address: a forwarder there leads to the
// API server's loopback port, and the pods resolve "kubernetes" (a name on the API server's
// certificate) to the node's address from a hosts file. The OpAMP server runs in this process,
// on the node's address.
func TestOpAMPBridgeRollsWithTwoReplicas(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	start := time.Now()

	res, err := bridgeImage.wait()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cluster.LoadOCILayout(res.Dir, bridgeImageRepo)).To(Succeed())
	srv, err := opamptest.Start(opamptest.Options{Addr: net.JoinHostPort(realnode.NodeIP, "0")})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	apiPort := forwardAPIServer(t)

	const name = "rolls"
	cs := cluster.Clientset
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "hosts"},
		Data:       map[string]string{"hosts": "127.0.0.1 localhost\n" + realnode.NodeIP + " kubernetes\n"},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	// The bridge's own rights are not what this test is about: its ServiceAccount is admin.
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-bridge"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: mbridge.Name(name)}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), ns+"-bridge", metav1.DeleteOptions{})
	})

	br := &v1alpha1.OpAMPBridge{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.OpAMPBridgeSpec{
			Endpoint:        srv.URL,
			Capabilities:    map[v1alpha1.OpAMPBridgeCapability]bool{v1alpha1.OpAMPBridgeCapabilityReportsStatus: true, v1alpha1.OpAMPBridgeCapabilityReportsHealth: true},
			Description:     &v1alpha1.AgentDescription{NonIdentifyingAttributes: map[string]string{"rollout": "first"}},
			Replicas:        ptr.To[int32](2),
			UpgradeStrategy: v1alpha1.UpgradeStrategyAutomatic,
			ImagePullPolicy: corev1.PullNever,
			Env: []corev1.EnvVar{
				{Name: "KUBERNETES_SERVICE_HOST", Value: "kubernetes"},
				{Name: "KUBERNETES_SERVICE_PORT", Value: apiPort},
			},
			Volumes: []corev1.Volume{{Name: "hosts", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "hosts"}}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "hosts", MountPath: "/etc/hosts", SubPath: "hosts", ReadOnly: true}},
		},
	}
	g.Expect(k8s.Create(ctx, br)).To(Succeed())

	dep := &appsv1.Deployment{}
	depKey := client.ObjectKey{Namespace: ns, Name: mbridge.Name(name)}
	rolledOut := func(g Gomega) {
		g.Expect(k8s.Get(ctx, depKey, dep)).To(Succeed())
		st := dep.Status
		g.Expect(st.ObservedGeneration).To(Equal(dep.Generation), "observed generation")
		g.Expect([]int32{st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas}).To(Equal([]int32{2, 2, 2, 2}),
			"replicas, updated, ready, available")
	}
	reports := func(value string) func(map[string]*opamptest.AgentState) bool {
		return func(agents map[string]*opamptest.AgentState) bool {
			for _, a := range agents {
				if a.Connected && attribute(a.Description, "rollout") == value {
					return true
				}
			}
			return false
		}
	}
	g.Eventually(rolledOut).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(srv.Wait(30*time.Second, "the leader to report rollout=first", reports("first"))).To(Succeed())
	firstGeneration := dep.Generation
	oldPods := podNames(g, ns, br)
	holder := leaseHolder(g, ns, name)
	g.Expect(oldPods).To(ContainElement(holder), "the Lease is held by a bridge pod")
	t.Logf("2 replicas available in %s, leader %s", time.Since(start).Round(100*time.Millisecond), holder)

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(br), br)).To(Succeed())
	br.Spec.Description.NonIdentifyingAttributes["rollout"] = "second"
	g.Expect(k8s.Update(ctx, br)).To(Succeed())
	changed := time.Now()
	g.Eventually(func(g Gomega) {
		rolledOut(g)
		g.Expect(dep.Generation).To(BeNumerically(">", firstGeneration), "the change reached the Deployment")
		pods := podNames(g, ns, br)
		g.Expect(pods).To(HaveLen(2))
		for _, p := range pods {
			g.Expect(oldPods).NotTo(ContainElement(p), "an old pod is left")
		}
		g.Expect(pods).To(ContainElement(leaseHolder(g, ns, name)), "the Lease is held by a new pod")
	}).WithTimeout(rolloutBound).WithPolling(time.Second).Should(Succeed())
	g.Expect(srv.Wait(30*time.Second, "the new leader to report rollout=second", reports("second"))).To(Succeed())
	t.Logf("rolled out and serving the new configuration %s after the change (%s in all)",
		time.Since(changed).Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
}

// forwardAPIServer listens on the node's address and forwards every connection to the API
// server's loopback port; it returns the port.
func forwardAPIServer(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(cluster.RESTConfig().Host)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(realnode.NodeIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", u.Host)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); _ = out.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// podNames lists the names of the bridge's pods that are not being deleted.
func podNames(g Gomega, ns string, br *v1alpha1.OpAMPBridge) []string {
	pods, err := cluster.Clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: mbridge.SelectorLabels(*br)}),
	})
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// leaseHolder returns the pod holding the bridge's Lease (the identity is "<hostname>_<uuid>").
func leaseHolder(g Gomega, ns, name string) string {
	l, err := cluster.Clientset.CoordinationV1().Leases(ns).Get(context.Background(), bridge.LeaseName(name), metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	host, _, _ := strings.Cut(ptr.Deref(l.Spec.HolderIdentity, ""), "_")
	return host
}

// attribute returns a non-identifying string attribute of an agent description.
func attribute(d *protobufs.AgentDescription, key string) string {
	for _, kv := range d.GetNonIdentifyingAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}
