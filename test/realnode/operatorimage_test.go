package realnode_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/internal/imagebuild"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/realnode"
)

// operatorImageRepo is the name the operator's image gets on the node (tag "1").
const operatorImageRepo = "otelop.test/opentelemetry-operator"

// operatorImage is the build of the operator's image, started by setup while the cluster starts.
var operatorImage imageBuild

// imageBuild is an image build running in the background.
type imageBuild struct {
	done chan struct{}
	res  imagebuild.Result
	err  error
	out  string
}

// buildOperatorImage starts building the operator's image for this platform, as `make images`
// does (internal/imagebuild), unless the -run filter excludes TestOperatorImageRunsOnTheNode.
func buildOperatorImage(ctx context.Context) {
	operatorImage.start(ctx, "opentelemetry-operator", "TestOperatorImageRunsOnTheNode")
}

// start builds the image of binary (a folder of cmd/) in the background, unless the -run filter
// excludes forTest, the test that uses it.
func (b *imageBuild) start(ctx context.Context, binary, forTest string) {
	b.done = make(chan struct{})
	if excludedByRun(forTest) {
		b.err = errors.New("not built: excluded by -run")
		close(b.done)
		return
	}
	go func() {
		defer close(b.done)
		if b.out, b.err = os.MkdirTemp("", binary+"-image-"); b.err != nil {
			return
		}
		res, err := imagebuild.Build(ctx, imagebuild.Options{
			Dir: testenv.RepoRoot(), Binaries: []string{binary},
			Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
			Meta:      imagebuild.Meta{Version: "1", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			Out:       b.out,
		})
		if err == nil {
			b.res = res[0]
		}
		b.err = err
	}()
}

// excludedByRun reports whether the -run filter leaves out the test called name.
func excludedByRun(name string) bool {
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		ok, _ := regexp.MatchString(f.Value.String(), name)
		return !ok
	}
	return false
}

// wait returns the build's result once it is done.
func (b *imageBuild) wait() (imagebuild.Result, error) {
	if b.done == nil {
		return imagebuild.Result{}, errors.New("not built: setup did not run")
	}
	<-b.done
	return b.res, b.err
}

// remove waits for the build and removes its output.
func (b *imageBuild) remove() {
	if b.done == nil {
		return
	}
	<-b.done
	if b.out != "" {
		_ = os.RemoveAll(b.out)
	}
}

// TestOperatorImageRunsOnTheNode: the operator's image as `make images` builds it
// (internal/imagebuild: static binary on the shared base layer, numeric non-root user, no shell),
// for this node's platform, is imported into containerd and runs under the restricted pod
// security profile (runAsNonRoot, which the kubelet checks against the image's numeric user; a
// read-only root filesystem; no capabilities): its `render` command turns a collector from a
// ConfigMap into the objects the operator would create.
func TestOperatorImageRunsOnTheNode(t *testing.T) {
	realnode.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)

	res, err := operatorImage.wait()
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	g.Expect(cluster.LoadOCILayout(res.Dir, operatorImageRepo)).To(Succeed())
	t.Logf("operator image %s (built during the cluster's start) imported in %s", res.Digest, time.Since(start).Round(100*time.Millisecond))

	cs := cluster.Clientset
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cr"},
		Data: map[string]string{"collector.yaml": `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: demo
spec:
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "render"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "operator", Image: operatorImageRepo + ":1", ImagePullPolicy: corev1.PullNever,
				Args: []string{"render", "-f", "/cr/collector.yaml", "-n", ns},
				SecurityContext: &corev1.SecurityContext{
					ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "cr", MountPath: "/cr", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "cr", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cr"}}}}},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "render", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
		term := p.Status.ContainerStatuses[0].State.Terminated
		g.Expect(term).NotTo(BeNil(), "still %+v", p.Status.ContainerStatuses[0].State)
		g.Expect(term.ExitCode).To(BeZero())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded))
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	logs, err := podLogs(ctx, ns, "render", "operator")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(logs).To(ContainSubstring("kind: Deployment"))
	g.Expect(logs).To(ContainSubstring("name: demo-collector"))
	g.Expect(logs).To(ContainSubstring("namespace: " + ns))
	t.Logf("render printed %d lines, %d objects", strings.Count(logs, "\n"), strings.Count(logs, "\nkind: ")+1)
}
