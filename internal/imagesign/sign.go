package imagesign

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// The names of cosign's layout that this package writes and reads.
const (
	// SignatureAnnotation holds a layer's base64 signature (empty on attestations: the DSSE
	// envelope carries it).
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// SimpleSigningMediaType is the media type of a signature layer.
	SimpleSigningMediaType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// DSSEMediaType is the media type of an attestation layer.
	DSSEMediaType types.MediaType = "application/vnd.dsse.envelope.v1+json"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// InTotoStatementType is the statement's _type (the version `cosign attest` writes).
	InTotoStatementType = "https://in-toto.io/Statement/v0.1"
	// SPDXPredicateType is the predicate type of an SPDX document (`--type spdxjson` in cosign).
	SPDXPredicateType = "https://spdx.dev/Document"
	// predicateTypeAnnotation repeats an attestation's predicate type on its layer.
	predicateTypeAnnotation = "predicateType"
)

// Statement is an in-toto statement, the payload of an attestation.
type Statement struct {
	Type          string          `json:"_type"`
	PredicateType string          `json:"predicateType"`
	Subject       []Subject       `json:"subject"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject names an artifact a statement is about by its digests.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// SignatureTag is where cosign keeps the signatures of d: <repo>:sha256-<hex>.sig.
func SignatureTag(d name.Digest) (name.Tag, error) { return suffixTag(d, "sig") }

// AttestationTag is where cosign keeps the attestations of d: <repo>:sha256-<hex>.att.
func AttestationTag(d name.Digest) (name.Tag, error) { return suffixTag(d, "att") }

func suffixTag(d name.Digest, suffix string) (name.Tag, error) {
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return name.Tag{}, err
	}
	return name.NewTag(d.Context().String() + ":" + h.Algorithm + "-" + h.Hex + "." + suffix)
}

// Sign signs the manifest d with s and adds the signature to d's signature manifest (keeping the
// signatures already there). The payload names d's digest and repository. A signature of the same
// payload that s's key already verifies is kept and nothing is written: signing twice is a no-op.
func Sign(ctx context.Context, d name.Digest, s signature.SignerVerifier, opts ...remote.Option) error {
	body, err := payload.Cosign{Image: d}.MarshalJSON()
	if err != nil {
		return err
	}
	tag, err := SignatureTag(d)
	if err != nil {
		return err
	}
	base, layers, err := readLayers(ctx, tag, opts)
	if err != nil {
		return err
	}
	for _, l := range layers {
		if l.mediaType == SimpleSigningMediaType && bytes.Equal(l.data, body) && verifyLayer(s, l) == nil {
			return nil
		}
	}
	sig, err := s.SignMessage(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("signing %s: %w", d, err)
	}
	return appendLayer(ctx, tag, base, static.NewLayer(body, SimpleSigningMediaType),
		map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}, opts)
}

// AttestSPDX signs an in-toto statement whose predicate is the SPDX JSON document sbom and whose
// subjects are d and the extra digests (e.g. the platform manifest the SBOM's binary is in), and
// adds it to d's attestation manifest. An identical statement that s's key verifies is kept and
// nothing is written.
func AttestSPDX(ctx context.Context, d name.Digest, sbom []byte, s signature.SignerVerifier, extra []v1.Hash, opts ...remote.Option) error {
	if !json.Valid(sbom) {
		return fmt.Errorf("attesting %s: the SBOM is not JSON", d)
	}
	var pred bytes.Buffer
	if err := json.Compact(&pred, sbom); err != nil {
		return err
	}
	st := Statement{Type: InTotoStatementType, PredicateType: SPDXPredicateType, Predicate: pred.Bytes()}
	for _, dg := range append([]string{d.DigestStr()}, hashes(extra)...) {
		h, err := v1.NewHash(dg)
		if err != nil {
			return err
		}
		st.Subject = append(st.Subject, Subject{Name: d.Context().Name(), Digest: map[string]string{h.Algorithm: h.Hex}})
	}
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tag, err := AttestationTag(d)
	if err != nil {
		return err
	}
	base, layers, err := readLayers(ctx, tag, opts)
	if err != nil {
		return err
	}
	for _, l := range layers {
		if p, err := verifyEnvelope(s, l); err == nil && bytes.Equal(p, body) {
			return nil
		}
	}
	env, err := dsse.WrapSigner(s, InTotoPayloadType).SignMessage(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("attesting %s: %w", d, err)
	}
	return appendLayer(ctx, tag, base, static.NewLayer(env, DSSEMediaType),
		map[string]string{SignatureAnnotation: "", predicateTypeAnnotation: SPDXPredicateType}, opts)
}

func hashes(hs []v1.Hash) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.String())
	}
	return out
}

// layer is one layer of a signature or attestation manifest, read whole.
type layer struct {
	mediaType   types.MediaType
	annotations map[string]string
	data        []byte
}

// readLayers reads the manifest at tag and its layers; a tag that does not exist gives a new empty
// OCI manifest.
func readLayers(ctx context.Context, tag name.Tag, opts []remote.Option) (v1.Image, []layer, error) {
	img, err := remote.Image(tag, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		return mutate.ConfigMediaType(base, types.OCIConfigJSON), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", tag, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, nil, err
	}
	var out []layer
	for _, desc := range m.Layers {
		l, err := img.LayerByDigest(desc.Digest)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %s: %w", tag, desc.Digest, err)
		}
		rc, err := l.Compressed() // remote layers check the digest while read
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %s: %w", tag, desc.Digest, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		_ = rc.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %s: %w", tag, desc.Digest, err)
		}
		out = append(out, layer{mediaType: desc.MediaType, annotations: desc.Annotations, data: data})
	}
	return img, out, nil
}

func appendLayer(ctx context.Context, tag name.Tag, base v1.Image, l v1.Layer, annotations map[string]string, opts []remote.Option) error {
	img, err := mutate.Append(base, mutate.Addendum{Layer: l, Annotations: annotations})
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img, append([]remote.Option{remote.WithContext(ctx)}, opts...)...); err != nil {
		return fmt.Errorf("writing %s: %w", tag, err)
	}
	return nil
}

// verifyLayer checks the annotation's signature of a signature layer's payload with v.
func verifyLayer(v signature.Verifier, l layer) error {
	b64, ok := l.annotations[SignatureAnnotation]
	if !ok || b64 == "" {
		return fmt.Errorf("no %s annotation", SignatureAnnotation)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return fmt.Errorf("%s annotation: %w", SignatureAnnotation, err)
	}
	return v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(l.data))
}

// verifyEnvelope checks the DSSE envelope of an attestation layer with v and returns its payload.
func verifyEnvelope(v signature.Verifier, l layer) ([]byte, error) {
	if l.mediaType != DSSEMediaType {
		return nil, fmt.Errorf("media type %s, not %s", l.mediaType, DSSEMediaType)
	}
	var p []byte
	dv := dsse.WrapVerifier(v, dsse.WithExpectedPayloadType(InTotoPayloadType), dsse.WithDecodedPayload(&p))
	if err := dv.VerifySignature(bytes.NewReader(l.data), nil); err != nil {
		return nil, err
	}
	return p, nil
}
