package collectorconfig

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

func strPtr(s string) *string { return &s }

func TestInferPortsSample(t *testing.T) {
	g := NewWithT(t)
	ports := InferPorts(Parse(mustYAML(t, sampleConfig)))
	g.Expect(ports.Service).To(Equal([]corev1.ServicePort{
		{Name: "jaeger-grpc", Port: 14250, Protocol: corev1.ProtocolTCP, AppProtocol: strPtr("grpc"), TargetPort: intstr.FromInt32(14250)},
		{Name: "otlp-grpc", Port: 4317, AppProtocol: strPtr("grpc"), TargetPort: intstr.FromInt32(4317)},
		{Name: "otlp-http", Port: 4000, AppProtocol: strPtr("http"), TargetPort: intstr.FromInt32(4000)},
		{Name: "port-6831", Port: 6831, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(6831)},
		{Name: "prometheus", Port: 8889},
		{Name: "zipkin", Port: 9411, Protocol: corev1.ProtocolTCP, AppProtocol: strPtr("http"), TargetPort: intstr.FromInt32(9411)},
	}))
	g.Expect(ports.Extension).To(Equal([]corev1.ServicePort{{Name: "health-check", Port: 13134}}))
	g.Expect(ports.Warnings).To(ConsistOf(ContainSubstring(`"jaeger-thrift_compact"`)))
}

func TestInferPortsCases(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		want      []corev1.ServicePort
	}{
		{
			name: "unknown receiver endpoint with scheme and path",
			cfg: `{receivers: {webhookevent: {endpoint: "http://0.0.0.0:8088/events"}},
				service: {pipelines: {logs: {receivers: [webhookevent], exporters: [debug]}}}, exporters: {debug: {}}}`,
			want: []corev1.ServicePort{{Name: "webhookevent", Port: 8088}},
		},
		{
			name: "unknown receiver listen_address, env host",
			cfg: `{receivers: {syslog/x: {listen_address: "${env:POD_IP}:5140"}},
				service: {pipelines: {logs: {receivers: [syslog/x], exporters: [debug]}}}, exporters: {debug: {}}}`,
			want: []corev1.ServicePort{{Name: "syslog-x", Port: 5140}},
		},
		{
			name: "unknown receiver with env port has no port",
			cfg: `{receivers: {foo: {endpoint: "0.0.0.0:${env:PORT}"}},
				service: {pipelines: {logs: {receivers: [foo], exporters: [debug]}}}, exporters: {debug: {}}}`,
		},
		{
			name: "unknown receiver without endpoint has no port",
			cfg: `{receivers: {kafka: {brokers: ["a:9092"]}},
				service: {pipelines: {logs: {receivers: [kafka], exporters: [debug]}}}, exporters: {debug: {}}}`,
		},
		{
			name: "scraper with endpoint has no port",
			cfg: `{receivers: {redis: {endpoint: "redis:6379"}},
				service: {pipelines: {metrics: {receivers: [redis], exporters: [debug]}}}, exporters: {debug: {}}}`,
		},
		{
			name: "unused receiver has no port",
			cfg: `{receivers: {otlp: {protocols: {grpc: {}}}, zipkin: {}},
				service: {pipelines: {traces: {receivers: [zipkin], exporters: [debug]}}}, exporters: {debug: {}}}`,
			want: []corev1.ServicePort{{Name: "zipkin", Port: 9411, Protocol: corev1.ProtocolTCP, AppProtocol: strPtr("http"), TargetPort: intstr.FromInt32(9411)}},
		},
		{
			name: "statsd and awsxray are UDP, ipv6 endpoint",
			cfg: `{receivers: {statsd: {endpoint: "[::]:9125"}, awsxray: {}},
				service: {pipelines: {metrics: {receivers: [statsd, awsxray], exporters: [debug]}}}, exporters: {debug: {}}}`,
			want: []corev1.ServicePort{
				{Name: "awsxray", Port: 2000, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(2000)},
				{Name: "statsd", Port: 9125, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(9125)},
			},
		},
		{
			name: "long and uppercase names",
			cfg: `{receivers: {otlp/VeryLongReceiverName: {protocols: {grpc: {}}}, otlp/UP: {protocols: {http: {endpoint: "0.0.0.0:5318"}}}},
				service: {pipelines: {traces: {receivers: [otlp/VeryLongReceiverName, otlp/UP], exporters: [debug]}}}, exporters: {debug: {}}}`,
			want: []corev1.ServicePort{
				{Name: "otlp-up-http", Port: 5318, AppProtocol: strPtr("http"), TargetPort: intstr.FromInt32(5318)},
				{Name: "port-4317", Port: 4317, AppProtocol: strPtr("grpc"), TargetPort: intstr.FromInt32(4317)},
			},
		},
		{
			name: "connector in receivers has no port",
			cfg: `{connectors: {count: {}}, receivers: {otlp: {protocols: {}}},
				service: {pipelines: {traces: {receivers: [otlp], exporters: [count]}, metrics: {receivers: [count], exporters: [debug]}}}, exporters: {debug: {}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(InferPorts(Parse(mustYAML(t, tc.cfg))).Service).To(Equal(tc.want))
		})
	}
}

func TestPortName(t *testing.T) {
	for _, tc := range []struct {
		id      string
		want    string
		renamed bool
	}{
		{"otlp-grpc", "otlp-grpc", false},
		{"otlp/in-grpc", "otlp-in-grpc", false},
		{"splunk_hec", "splunk-hec", false},
		{"Zipkin/A", "zipkin-a", false},
		{"a-very-long-name-x", "port-4317", true},
		{"otlp/a.b", "port-4317", true},
		{"otlp//x", "port-4317", true},
		{"123", "port-4317", true},
	} {
		got, renamed := PortName(tc.id, 4317)
		if got != tc.want || renamed != tc.renamed {
			t.Errorf("PortName(%q) = %q, %v; want %q, %v", tc.id, got, renamed, tc.want, tc.renamed)
		}
	}
}

func TestEndpointPort(t *testing.T) {
	for _, tc := range []struct {
		in    string
		port  int32
		found bool
		err   bool
	}{
		{"0.0.0.0:4317", 4317, true, false},
		{":4317", 4317, true, false},
		{"localhost", 0, false, false},
		{"", 0, false, false},
		{"[::1]:4317", 4317, true, false},
		{"[::1]", 0, false, false},
		{"http://example.com:9200/path:80", 9200, true, false},
		{"https://example.com/x", 0, false, false},
		{"${env:POD_IP}:4317", 4317, true, false},
		{"${env:ENDPOINT}", 0, false, false},
		{"${env:POD_IP}:${env:PORT}", 0, false, false},
		{"unix:///var/run/docker.sock", 0, false, false},
		{"0.0.0.0:0", 0, false, false},
		{"host:http", 0, false, true},
		{"host:70000", 0, false, true},
		{"host:-1", 0, false, true},
	} {
		port, found, err := endpointPort(tc.in)
		if port != tc.port || found != tc.found || (err != nil) != tc.err {
			t.Errorf("endpointPort(%q) = %d, %v, %v; want %d, %v, err=%v", tc.in, port, found, err, tc.port, tc.found, tc.err)
		}
	}
}

func TestMergePorts(t *testing.T) {
	g := NewWithT(t)
	user := []corev1.ServicePort{
		{Name: "custom", Port: 4317},
		{Name: "otlp-http", Port: 9999},
		{Name: "port-4318", Port: 9998},
	}
	inferred := []corev1.ServicePort{
		{Name: "otlp-grpc", Port: 4317},
		{Name: "otlp-http", Port: 4318},
		{Name: "statsd", Port: 4317, Protocol: corev1.ProtocolUDP},
		{Name: "zipkin", Port: 9411},
	}
	got, warnings := MergePorts(user, inferred)
	g.Expect(got).To(Equal([]corev1.ServicePort{
		{Name: "custom", Port: 4317},
		{Name: "otlp-http", Port: 9999},
		{Name: "port-4318", Port: 9998},
		{Name: "statsd", Port: 4317, Protocol: corev1.ProtocolUDP},
		{Name: "zipkin", Port: 9411},
	}))
	g.Expect(warnings).To(HaveLen(1))

	got, warnings = MergePorts(nil, inferred[:1])
	g.Expect(got).To(Equal(inferred[:1]))
	g.Expect(warnings).To(BeEmpty())

	got, _ = MergePorts([]corev1.ServicePort{{Name: "otlp-grpc", Port: 1}}, inferred[:1])
	g.Expect(got[1].Name).To(Equal("port-4317"))
}

func TestValidPortNameAgreesWithKubernetes(t *testing.T) {
	for _, s := range []string{"", "a", "1", "a-b", "-a", "a-", "a--b", "A", "a_b", "a.b", "abcdefghijklmno", "abcdefghijklmnop", "1-2", "1-a", "é"} {
		if got, want := validPortName(s), len(utilvalidation.IsValidPortName(s)) == 0; got != want {
			t.Errorf("validPortName(%q) = %v, Kubernetes says %v", s, got, want)
		}
	}
}
