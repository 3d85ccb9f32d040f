package certs

import (
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestRenew(t *testing.T) {
	o, err := Options{Mode: ModeSelf, Namespace: "ns", CertDir: t.TempDir(), Validity: time.Hour, CAValidity: 3 * time.Hour,
		ExtraIPs: []net.IP{net.ParseIP("127.0.0.1")}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		name             string
		after            time.Duration
		change           func(*Options)
		newCert, newCA   bool
		bundleLen        int
		wantSameMaterial bool
	}{
		{name: "fresh", after: time.Minute, wantSameMaterial: true, bundleLen: 1},
		{name: "serving cert due", after: 41 * time.Minute, newCert: true, bundleLen: 1},
		{name: "names changed", after: time.Minute, change: func(o *Options) { o.ExtraDNSNames = []string{"x.example"} }, newCert: true, bundleLen: 1},
		{name: "CA due keeps the old CA in the bundle", after: 121 * time.Minute, newCert: true, newCA: true, bundleLen: 2},
		{name: "CA expired is dropped", after: 181 * time.Minute, newCert: true, newCA: true, bundleLen: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			first, changed, err := renew(nil, nil, o, now)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			parsed, err := parseMaterial(first.data())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(parsed.cert.DNSNames).To(Equal([]string{"opentelemetry-operator-webhook-service.ns.svc", "opentelemetry-operator-webhook-service.ns.svc.cluster.local"}))
			g.Expect(parsed.cert.IPAddresses[0].Equal(net.ParseIP("127.0.0.1"))).To(BeTrue())

			o2 := o
			if tc.change != nil {
				tc.change(&o2)
			}
			next, changed, err := renew(parsed, nil, o2, now.Add(tc.after))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(Equal(!tc.wantSameMaterial))
			g.Expect(next.cert.Equal(parsed.cert)).To(Equal(!tc.newCert))
			g.Expect(next.ca.Equal(parsed.ca)).To(Equal(!tc.newCA))
			g.Expect(next.bundle).To(HaveLen(tc.bundleLen))
			g.Expect(next.cert.CheckSignatureFrom(next.ca)).To(Succeed())
			_, err = parseMaterial(next.data())
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

func TestParseMaterialRejectsGarbage(t *testing.T) {
	g := NewWithT(t)
	_, err := parseMaterial(map[string][]byte{keyCA: []byte("nope")})
	g.Expect(err).To(HaveOccurred())
}
