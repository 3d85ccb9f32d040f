package imagebuild

import (
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push uploads the image index in the OCI layout dir to repo:tag (e.g.
// "ghcr.io/otelop/opentelemetry-operator", "0.3.0"), authenticating with the credentials of
// `docker login` and its credential helpers, and returns the reference by digest. Registries on
// localhost are spoken to over plain HTTP.
func Push(ctx context.Context, dir, repo, tag string, progress io.Writer, opts ...remote.Option) (name.Digest, error) {
	if progress == nil {
		progress = io.Discard
	}
	idx, err := ReadLayout(dir)
	if err != nil {
		return name.Digest{}, err
	}
	ref, err := name.NewTag(repo + ":" + tag)
	if err != nil {
		return name.Digest{}, fmt.Errorf("image reference %s:%s: %w", repo, tag, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	fmt.Fprintf(progress, "==> pushing %s (%s)\n", ref, d)
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return ref.Context().Digest(d.String()), nil
}
