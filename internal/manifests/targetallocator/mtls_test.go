package targetallocator

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/golden"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// placeholderSecrets stands in for issued material, so that the golden file is stable.
var placeholderSecrets = CertSecrets{
	CA:     map[string][]byte{SecretCAKey: []byte("CA"), SecretCertKey: []byte("CA"), SecretKeyKey: []byte("CA-KEY")},
	Server: map[string][]byte{SecretCAKey: []byte("CA"), SecretCertKey: []byte("SERVER"), SecretKeyKey: []byte("SERVER-KEY")},
	Client: map[string][]byte{SecretCAKey: []byte("CA"), SecretCertKey: []byte("CLIENT"), SecretKeyKey: []byte("CLIENT-KEY")},
}

// TestMTLSGolden: the "full" target allocator (prometheusCR enabled) with the
// operator.targetallocator.mtls gate: the three Secrets, the https section of the file, the
// container port, the /tls mount of the serving certificate and the Service's port 443.
func TestMTLSGolden(t *testing.T) {
	g := NewWithT(t)
	opts := DefaultOptions()
	opts.MTLS = true
	ta := loadTA(t, "full.yaml")
	secrets, err := CertificateSecrets(ta, placeholderSecrets, opts)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := Build(ta, loadCollector(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	all := make([]client.Object, 0, len(secrets)+len(objs))
	for _, s := range secrets {
		all = append(all, s)
	}
	all = append(all, objs...)
	out, err := manifestutils.Encode(all, "yaml")
	g.Expect(err).NotTo(HaveOccurred())
	golden.Check(t, "mtls.golden.yaml", out)
}

// TestMTLSEnabled: with the gate on, spec.mtls decides when set, otherwise mutual TLS is on for
// target allocators that discover Prometheus Operator resources; with the gate off it is off. Without mutual TLS nothing of it
// is generated (the positive control of TestMTLSGolden).
func TestMTLSEnabled(t *testing.T) {
	g := NewWithT(t)
	on, off := &v1beta1.TargetAllocatorMTLS{Enabled: true, UseCertManager: ptr.To(false)}, &v1beta1.TargetAllocatorMTLS{}
	for _, tc := range []struct {
		mtls     *v1beta1.TargetAllocatorMTLS
		cr, gate bool
		want     bool
	}{
		{nil, true, true, true},
		{nil, true, false, false},
		{nil, false, true, false},
		{on, false, true, true},
		{on, true, false, false}, // the gate is the master switch
		{off, true, true, false},
	} {
		g.Expect(MTLSEnabled(tc.mtls, tc.cr, tc.gate)).To(Equal(tc.want), "%+v", tc)
	}

	opts := DefaultOptions()
	opts.MTLS = true
	ta := loadTA(t, "standalone.yaml") // no prometheusCR
	secrets, err := CertificateSecrets(ta, placeholderSecrets, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(secrets).To(BeEmpty())
	objs, err := Build(ta, nil, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(find[*corev1.Service](objs).Spec.Ports).To(HaveLen(1))
	g.Expect(find[*appsv1.Deployment](objs).Spec.Template.Spec.Volumes).To(HaveLen(1))
	g.Expect(find[*corev1.ConfigMap](objs).Data[ConfigMapKey]).NotTo(ContainSubstring("https"))

	// A Secret the operator does not own (nil data) is not generated but still mounted.
	ta = loadTA(t, "full.yaml")
	secrets, err = CertificateSecrets(ta, CertSecrets{Client: placeholderSecrets.Client}, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(secrets).To(HaveLen(1))
	g.Expect(secrets[0].Name).To(Equal("cluster-ta-client-cert"))
}
