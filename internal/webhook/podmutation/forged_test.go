package podmutation_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/instrumentation"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// victimToken is the credential in the victim collector's exporter config.
const victimToken = "Bearer victim-s3cret-token-29"

const victimConfig = `
receivers:
  otlp:
    protocols:
      grpc: {}
exporters:
  otlphttp:
    endpoint: https://vendor.example:4318
    headers:
      Authorization: "` + victimToken + `"
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlphttp]
`

// forge posts review straight to the pod webhook's port, as any pod that reaches the port can:
// no API server in between, so every claim in the review (namespace, owners, user) is the
// caller's. It returns the response and its body as text.
func forge(t *testing.T, req admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, string) {
	t.Helper()
	g := NewWithT(t)
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req,
	}
	body, err := json.Marshal(review)
	g.Expect(err).NotTo(HaveOccurred())
	wio := env.Environment.WebhookInstallOptions
	g.Expect(wio.LocalServingHost).To(HavePrefix("127."), "tests connect to loopback only")
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(wio.LocalServingCAData)).To(BeTrue())
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	url := fmt.Sprintf("https://%s:%d%s", wio.LocalServingHost, wio.LocalServingPort, podmutation.Path)
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), string(raw))
	var out admissionv1.AdmissionReview
	g.Expect(json.Unmarshal(raw, &out)).To(Succeed())
	g.Expect(out.Response).NotTo(BeNil())
	return out.Response, string(raw) + string(out.Response.Patch)
}

func podReview(t *testing.T, pod *corev1.Pod) admissionv1.AdmissionRequest {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admissionv1.AdmissionRequest{
		UID:       types.UID("forged-" + pod.Name),
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Operation: admissionv1.Create,
		Namespace: pod.Namespace,
		UserInfo:  authenticationv1.UserInfo{Username: "system:serviceaccount:attacker:default"},
		Object:    runtime.RawExtension{Raw: raw},
	}
}

// ourEvents returns the notes of the pod webhook's Events in namespace ns.
func ourEvents(g Gomega, ns string) []string {
	events := &eventsv1.EventList{}
	g.Expect(env.Client.List(context.Background(), events, client.InNamespace(ns))).To(Succeed())
	var notes []string
	for _, e := range events.Items {
		if e.Reason == podmutation.EventReason {
			notes = append(notes, e.Regarding.Kind+"/"+e.Regarding.Name+": "+e.Note)
		}
	}
	return notes
}

// TestForgedReviewGetsNoConfig is the attack of issue 29, finding 1: a pod of any namespace posts
// a made-up AdmissionReview straight to the webhook's port, claiming a pod of namespace victim
// that asks for the victim's sidecar collector, names the victim's ReplicaSet (with a UID it
// cannot know) and asks for an Instrumentation that does not exist (so that the webhook has an
// Event to write). The old webhook answered with the whole collector config in OTEL_CONFIG, the
// exporter's token included, and the Deployment's name and UID read on the caller's behalf, and
// wrote a Warning Event with the caller's text into victim. Now the answer names only the
// ConfigMap, leaves the unconfirmed owner's owners out, and no Event is written.
//
// Positive controls: the forged call was processed (its patch adds the sidecar); a real pod
// created through the API server gets the sidecar with the config mounted by reference from the
// ConfigMap the collector builder generates, which holds the config with the token, and gets the
// Deployment's attributes and an Event.
func TestForgedReviewGetsNoConfig(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	victim := newNamespace(t, "victim", nil)
	newCollector(t, victim, "agent", v1beta1.ModeSidecar, func(c *v1beta1.OpenTelemetryCollector) {
		c.Spec.Config = v1beta1.Config{}
		if err := yaml.UnmarshalStrict([]byte(victimConfig), &c.Spec.Config); err != nil {
			t.Fatal(err)
		}
	})
	rs := replicaSetOfDeployment(t, victim, "shop")
	annotations := map[string]string{
		podmutation.Annotation:                                 "agent",
		instrumentation.InjectAnnotation(instrumentation.Java): "forged-event-text",
	}

	// The attack.
	forged := newPod(victim, "forged", annotations)
	forged.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name,
		UID: "00000000-0000-0000-0000-000000000029", Controller: ptr.To(true)}}
	resp, text := forge(t, podReview(t, forged))
	g.Expect(resp.Allowed).To(BeTrue())
	g.Expect(resp.Patch).NotTo(BeEmpty(), "control: the forged review was processed")
	g.Expect(text).NotTo(ContainSubstring("victim-s3cret-token"), "no exporter token anywhere in the answer")
	g.Expect(text).To(ContainSubstring("--config=/conf/collector.yaml"), "control: the sidecar was added, by reference")
	g.Expect(text).NotTo(ContainSubstring(sidecar.ConfigEnv), "no OTEL_CONFIG")
	g.Expect(text).NotTo(ContainSubstring("vendor.example"), "nothing of the config")
	g.Expect(text).NotTo(ContainSubstring("k8s.deployment"), "no owner learnt from a reference whose UID does not check out")
	g.Expect(text).NotTo(ContainSubstring(string(rs.UID)))

	// Positive control: a real pod of the same ReplicaSet, through the API server.
	real := newPod(victim, "real", map[string]string{
		podmutation.Annotation:                                 "agent",
		instrumentation.InjectAnnotation(instrumentation.Java): "nope",
	})
	real.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
	got, _ := create(t, real)
	otc := expectInjected(g, got, victim, "agent")
	g.Expect(envValue(otc, sidecar.ResourceAttributesEnv)).To(ContainSubstring("k8s.deployment.name=shop"))
	raw, err := json.Marshal(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).NotTo(ContainSubstring("victim-s3cret-token"), "the real pod does not carry the token either")

	// The ConfigMap the pod mounts is the one the collector reconciler builds, with the config.
	stored := &v1beta1.OpenTelemetryCollector{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: victim, Name: "agent"}, stored)).To(Succeed())
	objs, err := mcollector.Build(*stored, manifests)
	g.Expect(err).NotTo(HaveOccurred())
	var cm *corev1.ConfigMap
	for _, o := range objs {
		if c, ok := o.(*corev1.ConfigMap); ok {
			cm = c
		}
	}
	g.Expect(cm).NotTo(BeNil())
	g.Expect(got.Spec.Volumes).To(ContainElement(And(HaveField("Name", naming.ConfigMapVolume), HaveField("ConfigMap.Name", cm.Name))))
	g.Expect(cm.Data[naming.ConfigMapKey]).To(ContainSubstring(victimToken))

	// The real pod's Event arrives; the forged one never did.
	var notes []string
	g.Eventually(func(g Gomega) {
		notes = ourEvents(g, victim)
		g.Expect(notes).To(ContainElement(ContainSubstring(victim + "/nope not found")))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) []string { return ourEvents(g, victim) }, 2*time.Second, 200*time.Millisecond).
		ShouldNot(ContainElement(ContainSubstring("forged-event-text")))
}

// TestForgedReviewWithoutOwnerWritesNoEvent: a forged review of a pod with no owner (nothing the
// API server can confirm) gets its warning back but writes no Event into the claimed namespace,
// and neither does a dry run of a real pod; a real pod of a Deployment does (control).
func TestForgedReviewWithoutOwnerWritesNoEvent(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "event-target", nil)
	resp, _ := forge(t, podReview(t, newPod(ns, "bare", map[string]string{
		instrumentation.InjectAnnotation(instrumentation.Java): "bare-forged-text"})))
	g.Expect(resp.Allowed).To(BeTrue())
	g.Expect(resp.Warnings).To(ContainElement(ContainSubstring("bare-forged-text")), "control: the review was processed")

	rs := replicaSetOfDeployment(t, ns, "web")
	owned := func(name, value string) *corev1.Pod {
		pod := newPod(ns, name, map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): value})
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
		return pod
	}
	c, w := clientWithWarnings(t)
	g.Expect(c.Create(ctx, owned("dry", "dry-run-text"), client.DryRunAll)).To(Succeed())
	g.Expect(w.all()).To(ContainElement(ContainSubstring("dry-run-text")), "control: the dry run reached the webhook")
	create(t, owned("wet", "wet-text"))

	g.Eventually(func(g Gomega) {
		g.Expect(ourEvents(g, ns)).To(ContainElement(ContainSubstring("wet-text")))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) string { return strings.Join(ourEvents(g, ns), "\n") }, 2*time.Second, 200*time.Millisecond).
		ShouldNot(Or(ContainSubstring("bare-forged-text"), ContainSubstring("dry-run-text")))
}

// TestForgedReviewOfAMissingNamespace: a forged review claiming a namespace that does not exist
// gets no sidecar, even of a collector that allows every namespace ("*"), whose config a pod of
// another namespace would carry inline; the same review claiming an existing namespace gets it
// (control).
func TestForgedReviewOfAMissingNamespace(t *testing.T) {
	g := NewWithT(t)
	shared := newNamespace(t, "shared-agent", nil)
	newCollector(t, shared, "agent", v1beta1.ModeSidecar, func(c *v1beta1.OpenTelemetryCollector) {
		c.Annotations = map[string]string{podmutation.AllowedNamespacesAnnotation: "*"}
	})
	ask := map[string]string{podmutation.Annotation: shared + "/agent"}

	resp, text := forge(t, podReview(t, newPod("no-such-namespace", "p", ask)))
	g.Expect(resp.Allowed).To(BeTrue())
	g.Expect(resp.Patch).To(BeEmpty())
	g.Expect(text).NotTo(ContainSubstring(sidecar.ConfigEnv))
	g.Expect(resp.Warnings).To(ContainElement(ContainSubstring(`namespace "no-such-namespace"`)))

	existing := newNamespace(t, "consumer", nil)
	resp, text = forge(t, podReview(t, newPod(existing, "p", ask)))
	g.Expect(resp.Patch).NotTo(BeEmpty(), "control: an existing namespace gets the sidecar")
	g.Expect(text).To(ContainSubstring(sidecar.ConfigEnv), "control: inline, as for any pod of another namespace")
}
