package release

import (
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
)

// PushChart pushes the packaged chart at path to the OCI repository repo
// (oci://<registry>/<path>, e.g. oci://ghcr.io/otelop/charts) as <repo>/<name>:<version>, with the
// Helm SDK's registry client: credentials come from `helm registry login` (Helm's registry
// config). plainHTTP talks HTTP instead of HTTPS (a local registry). It returns the pushed
// reference and the manifest's digest.
func PushChart(path, repo string, plainHTTP bool) (ref, digest string, err error) {
	host, ok := strings.CutPrefix(repo, "oci://")
	if !ok || host == "" {
		return "", "", fmt.Errorf("chart repository %q: want oci://<registry>/<path>", repo)
	}
	ch, err := loader.Load(path)
	if err != nil {
		return "", "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var opts []registry.ClientOption
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return "", "", err
	}
	ref = strings.TrimSuffix(host, "/") + "/" + ch.Name() + ":" + ch.Metadata.Version
	res, err := c.Push(data, ref)
	if err != nil {
		return "", "", fmt.Errorf("pushing %s to %s: %w", path, ref, err)
	}
	return res.Ref, res.Manifest.Digest, nil
}
