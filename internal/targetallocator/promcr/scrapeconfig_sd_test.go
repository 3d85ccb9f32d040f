package promcr

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	promcommon "github.com/prometheus/common/config"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// sdStore holds the credentials of the discovery kinds, one distinct value per secret key, so
// a test can tell which one reached Prometheus' configuration.
var sdStore = mapStore{}

func init() {
	for _, k := range []string{"consul-token", "ec2-access", "ec2-secret", "lightsail-access", "lightsail-secret",
		"azure-secret", "openstack-password", "openstack-app-secret", "do-token", "linode-token", "hetzner-user",
		"hetzner-pass", "ovh-secret", "ovh-consumer", "scaleway-secret", "ionos-token", "kuma-token", "eureka-pass",
		"eureka-user", "nomad-token", "puppetdb-token", "docker-token", "swarm-token"} {
		sdStore["secret/team-c/sd/"+k] = "value-of-" + k
	}
	sdStore["secret/team-c/sd/scaleway-secret"] = "00000000-0000-4000-8000-0000000000a1" // Prometheus checks it is a UUID
}

// sdCases are one ScrapeConfig per discovery kind, each with the credentials it can have; want
// is Prometheus' name of the discovery and the secret values that must reach it.
func sdCases() []struct {
	spec    monv1alpha1.ScrapeConfigSpec
	sd      string
	secrets []string
} {
	s := func(k string) *corev1.SecretKeySelector { return ptr.To(sel("sd", k)) }
	bearer := func(k string) *monv1.SafeAuthorization { return &monv1.SafeAuthorization{Credentials: s(k)} }
	basic := func(u, p string) *monv1.BasicAuth { return &monv1.BasicAuth{Username: *s(u), Password: *s(p)} }
	tcp := "tcp://docker.example.test:2376"
	return []struct {
		spec    monv1alpha1.ScrapeConfigSpec
		sd      string
		secrets []string
	}{
		{monv1alpha1.ScrapeConfigSpec{ConsulSDConfigs: []monv1alpha1.ConsulSDConfig{{Server: "consul.example.test:8500", TokenRef: s("consul-token"),
			Datacenter: ptr.To("dc1"), Scheme: ptr.To(monv1.SchemeHTTPS), Services: []string{"api"}, Tags: []string{"prod"},
			NodeMeta: map[string]string{"rack": "r1"}, AllowStale: ptr.To(false), RefreshInterval: ptr.To(monv1.Duration("1m")),
			ProxyConfig: monv1.ProxyConfig{ProxyURL: ptr.To("http://proxy.example.test:3128")}}}},
			"consul", []string{"consul-token"}},
		{monv1alpha1.ScrapeConfigSpec{EC2SDConfigs: []monv1alpha1.EC2SDConfig{{Region: ptr.To("eu-west-1"), AccessKey: s("ec2-access"),
			SecretKey: s("ec2-secret"), RoleARN: ptr.To("arn:aws:iam::1:role/sd"), Port: ptr.To[int32](9100),
			Filters: monv1alpha1.Filters{{Name: "tag:env", Values: []string{"prod"}}}}}},
			"ec2", []string{"ec2-access", "ec2-secret"}},
		{monv1alpha1.ScrapeConfigSpec{AzureSDConfigs: []monv1alpha1.AzureSDConfig{{SubscriptionID: "sub-1", TenantID: ptr.To("tenant-1"),
			ClientID: ptr.To("client-1"), ClientSecret: s("azure-secret"), ResourceGroup: ptr.To("rg"),
			AuthenticationMethod: ptr.To(monv1alpha1.AuthMethodTypeOAuth), Port: ptr.To[int32](9100)}}},
			"azure", []string{"azure-secret"}},
		{monv1alpha1.ScrapeConfigSpec{GCESDConfigs: []monv1alpha1.GCESDConfig{{Project: "proj", Zone: "europe-west1-b",
			Filter: ptr.To("labels.env=prod"), TagSeparator: ptr.To(";")}}},
			"gce", nil},
		{monv1alpha1.ScrapeConfigSpec{DigitalOceanSDConfigs: []monv1alpha1.DigitalOceanSDConfig{{Authorization: bearer("do-token"), Port: ptr.To[int32](9100)}}},
			"digitalocean", []string{"do-token"}},
		{monv1alpha1.ScrapeConfigSpec{DockerSDConfigs: []monv1alpha1.DockerSDConfig{{Host: tcp, Authorization: bearer("docker-token"),
			HostNetworkingHost: ptr.To("localhost"), MatchFirstNetwork: ptr.To(true), Filters: monv1alpha1.Filters{{Name: "label", Values: []string{"scrape=true"}}}}}},
			"docker", []string{"docker-token"}},
		{monv1alpha1.ScrapeConfigSpec{DockerSwarmSDConfigs: []monv1alpha1.DockerSwarmSDConfig{{Host: tcp, Role: monv1alpha1.DockerSwarmRoleTasks,
			Authorization: bearer("swarm-token"), Port: ptr.To[int32](8080)}}},
			"dockerswarm", []string{"swarm-token"}},
		{monv1alpha1.ScrapeConfigSpec{EurekaSDConfigs: []monv1alpha1.EurekaSDConfig{{Server: "http://eureka.example.test:8761/eureka",
			BasicAuth: basic("eureka-user", "eureka-pass")}}},
			"eureka", []string{"eureka-user", "eureka-pass"}},
		{monv1alpha1.ScrapeConfigSpec{HetznerSDConfigs: []monv1alpha1.HetznerSDConfig{{Role: monv1alpha1.HetznerRoleRobot,
			BasicAuth: basic("hetzner-user", "hetzner-pass"), LabelSelector: ptr.To("env=prod")}}},
			"hetzner", []string{"hetzner-user", "hetzner-pass"}},
		{monv1alpha1.ScrapeConfigSpec{KumaSDConfigs: []monv1alpha1.KumaSDConfig{{Server: "http://kuma.example.test:5676", ClientID: ptr.To("ta"),
			FetchTimeout: ptr.To(monv1.Duration("2m")), Authorization: bearer("kuma-token")}}},
			"kuma", []string{"kuma-token"}},
		{monv1alpha1.ScrapeConfigSpec{NomadSDConfigs: []monv1alpha1.NomadSDConfig{{Server: "https://nomad.example.test:4646", Namespace: ptr.To("default"),
			Region: ptr.To("global"), AllowStale: ptr.To(true), Authorization: bearer("nomad-token")}}},
			"nomad", []string{"nomad-token"}},
		{monv1alpha1.ScrapeConfigSpec{PuppetDBSDConfigs: []monv1alpha1.PuppetDBSDConfig{{URL: "https://puppetdb.example.test", Query: `resources { type = "Class" }`,
			IncludeParameters: ptr.To(true), Port: ptr.To[int32](9100), Authorization: bearer("puppetdb-token")}}},
			"puppetdb", []string{"puppetdb-token"}},
		{monv1alpha1.ScrapeConfigSpec{LinodeSDConfigs: []monv1alpha1.LinodeSDConfig{{Region: ptr.To("eu-west"), Authorization: bearer("linode-token"),
			TagSeparator: ptr.To(",")}}},
			"linode", []string{"linode-token"}},
		{monv1alpha1.ScrapeConfigSpec{LightSailSDConfigs: []monv1alpha1.LightSailSDConfig{{Region: ptr.To("eu-west-1"), AccessKey: s("lightsail-access"),
			SecretKey: s("lightsail-secret"), Endpoint: ptr.To("https://lightsail.eu-west-1.amazonaws.com")}}},
			"lightsail", []string{"lightsail-access", "lightsail-secret"}},
		{monv1alpha1.ScrapeConfigSpec{OpenStackSDConfigs: []monv1alpha1.OpenStackSDConfig{{Role: monv1alpha1.OpenStackRoleLoadBalancer, Region: "RegionOne",
			IdentityEndpoint: ptr.To(monv1alpha1.URL("https://keystone.example.test:5000/v3")), Username: ptr.To("sd"), Password: s("openstack-password"),
			DomainName: ptr.To("Default"), ProjectName: ptr.To("ops"), ApplicationCredentialID: ptr.To("app-1"),
			ApplicationCredentialSecret: s("openstack-app-secret"), Availability: ptr.To(monv1alpha1.OpenStackAvailabilityInternal)}}},
			"openstack", []string{"openstack-password", "openstack-app-secret"}},
		{monv1alpha1.ScrapeConfigSpec{OVHCloudSDConfigs: []monv1alpha1.OVHCloudSDConfig{{ApplicationKey: "app-key", ApplicationSecret: *s("ovh-secret"),
			ConsumerKey: *s("ovh-consumer"), Service: monv1alpha1.OVHServiceDedicatedServer, Endpoint: ptr.To("ovh-eu")}}},
			"ovhcloud", []string{"ovh-secret", "ovh-consumer"}},
		{monv1alpha1.ScrapeConfigSpec{ScalewaySDConfigs: []monv1alpha1.ScalewaySDConfig{{AccessKey: "SCWXXXXXXXXXXXXXXXXX", SecretKey: *s("scaleway-secret"),
			ProjectID: "00000000-0000-4000-8000-0000000000b2", Role: monv1alpha1.ScalewayRoleBaremetal, Zone: ptr.To("fr-par-1"), TagsFilter: []string{"prod"}}}},
			"scaleway", []string{"scaleway-secret"}},
		{monv1alpha1.ScrapeConfigSpec{IonosSDConfigs: []monv1alpha1.IonosSDConfig{{DataCenterID: "dc-1", Authorization: *bearer("ionos-token"),
			Port: ptr.To[int32](9100)}}},
			"ionos", []string{"ionos-token"}},
	}
}

func sdResources() Resources {
	var r Resources
	for _, c := range sdCases() {
		r.ScrapeConfigs = append(r.ScrapeConfigs, &monv1alpha1.ScrapeConfig{ObjectMeta: metav1.ObjectMeta{Name: c.sd, Namespace: "team-c"}, Spec: c.spec})
	}
	return r
}

// TestScrapeConfigDiscoveryKinds is issue 33, finding 6: a ScrapeConfig's consul, ec2, azure, gce,
// digitalocean, docker, dockerswarm, eureka, hetzner, kuma, nomad, puppetdb, linode, lightsail,
// openstack, ovhcloud, scaleway and ionos discovery were refused. Each is now rendered into its
// <kind>_sd_configs section (testdata/scrapeconfig_sd.golden.yaml), Prometheus parses every job
// into exactly one discovery of that kind, and every secret-backed credential reaches the parsed
// discovery configuration (none is dropped).
func TestScrapeConfigDiscoveryKinds(t *testing.T) {
	loaded := translateGolden(t, sdResources(), sdStore, "scrapeconfig_sd.golden.yaml")
	cases := sdCases()
	if len(loaded) != len(cases) {
		t.Fatalf("%d jobs, want %d", len(loaded), len(cases))
	}
	for _, c := range cases {
		i := indexOf(loaded, "scrapeConfig/team-c/"+c.sd)
		if i < 0 {
			t.Errorf("%s: no job", c.sd)
			continue
		}
		sds := loaded[i].ServiceDiscoveryConfigs
		if len(sds) != 1 || sds[0].Name() != c.sd {
			t.Errorf("%s: Prometheus parsed %d discoveries (%v), want one %s", c.sd, len(sds), sds, c.sd)
			continue
		}
		found := secretsIn(reflect.ValueOf(sds[0]))
		for _, k := range c.secrets {
			if !slices.Contains(found, sdStore["secret/team-c/sd/"+k]) {
				t.Errorf("%s: the credential from secret key %q is missing from Prometheus' configuration (has %q)", c.sd, k, found)
			}
		}
	}
}

// secretsIn collects the values of a parsed configuration's secret-typed fields, and of the
// plain strings that carry a credential (EC2's access key, Scaleway's, basic auth's username).
func secretsIn(v reflect.Value) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, secretsIn(v.Elem())...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			out = append(out, secretsIn(v.Field(i))...)
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, secretsIn(v.Index(i))...)
		}
	case reflect.String:
		if v.Type() == reflect.TypeFor[promcommon.Secret]() || strings.HasPrefix(v.String(), "value-of-") {
			out = append(out, v.String())
		}
	}
	return out
}

// TestScrapeConfigDiscoveryNeedsItsSecrets: a discovery whose credential secret cannot be read
// is left out with an error naming the field, never rendered without it.
func TestScrapeConfigDiscoveryNeedsItsSecrets(t *testing.T) {
	for _, c := range sdCases() {
		if len(c.secrets) == 0 {
			continue
		}
		s := mapStore{}
		for k, v := range sdStore {
			if k != "secret/team-c/sd/"+c.secrets[0] {
				s[k] = v
			}
		}
		sc := &monv1alpha1.ScrapeConfig{ObjectMeta: metav1.ObjectMeta{Name: c.sd, Namespace: "team-c"}, Spec: c.spec}
		scs, errs := Translate(Resources{ScrapeConfigs: []*monv1alpha1.ScrapeConfig{sc}}, s, Options{})
		want := fmt.Sprintf("secret team-c/sd has no key %q", c.secrets[0])
		if len(scs) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.") || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s without %s: %d jobs, errors %v", c.sd, c.secrets[0], len(scs), errs)
		}
	}
}

// TestDockerSocketRefusedWithoutFSAccess: deny_fs_access_through_sms refuses a Docker or Docker
// Swarm discovery through a unix socket (a file of the allocator's); a TCP host stays accepted.
func TestDockerSocketRefusedWithoutFSAccess(t *testing.T) {
	sock := "unix:///var/run/docker.sock"
	r := Resources{ScrapeConfigs: []*monv1alpha1.ScrapeConfig{
		{ObjectMeta: metav1.ObjectMeta{Name: "docker", Namespace: "team-c"},
			Spec: monv1alpha1.ScrapeConfigSpec{DockerSDConfigs: []monv1alpha1.DockerSDConfig{{Host: sock}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "swarm", Namespace: "team-c"},
			Spec: monv1alpha1.ScrapeConfigSpec{DockerSwarmSDConfigs: []monv1alpha1.DockerSwarmSDConfig{{Host: "tcp://127.0.0.1:2376", Role: "Nodes"}, {Host: sock, Role: "Nodes"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "tcp", Namespace: "team-c"},
			Spec: monv1alpha1.ScrapeConfigSpec{DockerSDConfigs: []monv1alpha1.DockerSDConfig{{Host: "tcp://127.0.0.1:2376"}}}},
	}}
	scs, errs := Translate(r, nil, Options{DenyFSAccess: true})
	msgs := fmt.Sprint(errs)
	for _, want := range []string{
		`ScrapeConfig team-c/docker: spec.dockerSDConfigs[0].host: "unix:///var/run/docker.sock" is a socket on the file system, refused: deny_fs_access_through_sms is set`,
		`ScrapeConfig team-c/swarm: spec.dockerSwarmSDConfigs[1].host:`,
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("errors %s\nlack %q", msgs, want)
		}
	}
	if len(errs) != 2 || len(scs) != 1 || jobName(scs[0]) != "scrapeConfig/team-c/tcp" {
		t.Errorf("kept %d jobs, errors %v; want only the TCP one", len(scs), errs)
	}
	// Positive control: without the option the socket is allowed, as Prometheus allows it.
	if scs, errs := Translate(r, nil, Options{}); len(errs) != 0 || len(scs) != 3 {
		t.Errorf("without deny_fs_access_through_sms: %d jobs, errors %v", len(scs), errs)
	}
}
