package app

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	libutils "github.com/openmcp-project/openmcp-operator/lib/utils"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/controller"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// With the access requests already gone, deletion still removes the provider's Flux objects in
// the platform cluster (on the real platform API server), and keeps a look-alike it did not create.
func TestDeleteWithoutClusterAccessCleansThePlatform(t *testing.T) {
	g := newG(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc := world.Platform.Client
	obj := &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: "no-access-cp", Namespace: "default"}, Spec: spv1alpha1.OtelOperatorSpec{Version: "0.20.8"}}
	ns, err := libutils.StableMCPNamespace(obj.Name, obj.Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	if err := pc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		g.Expect(err).To(Satisfy(apierrors.IsAlreadyExists))
	}
	in := flux.Inputs{Name: obj.Name, PlatformNamespace: ns, InstanceID: instance.ID(obj.Namespace, obj.Name), Version: "0.20.8",
		ChartURL: spv1alpha1.DefaultChartURL, Interval: time.Minute, CPKubeconfigSecret: "cp", WorkloadKubeconfigSecret: "wl"}
	caCopy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: instance.ChartCASecretName(obj.Name), Namespace: ns, Labels: instance.Labels(in.InstanceID)}}
	ours := []client.Object{flux.OCIRepository(in), flux.CRDsRelease(in), flux.WorkloadRelease(in), caCopy}
	for _, o := range ours {
		g.Expect(pc.Create(ctx, o)).To(Succeed())
	}
	notOurs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: instance.ChartPullSecretName(obj.Name), Namespace: ns}}
	g.Expect(pc.Create(ctx, notOurs)).To(Succeed())

	svc := &controller.Service{PodNamespace: world.PodNamespace, Platform: pc}
	g.Eventually(func(g Gomega) {
		res, err := svc.Delete(ctx, obj, nil, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.RequeueAfter).To(BeZero())
	}).Should(Succeed())
	for _, o := range ours {
		g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Satisfy(apierrors.IsNotFound), o.GetName())
	}
	g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(notOurs), notOurs)).To(Succeed(), "a Secret the provider did not create stays")
	g.Expect(obj.Status.Conditions).NotTo(BeEmpty())
}
