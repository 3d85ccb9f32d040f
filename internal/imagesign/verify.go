package imagesign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// ErrNotSigned says that d has no signature (or attestation) manifest at all.
var ErrNotSigned = errors.New("no signatures")

// Verify returns the payloads of d's signatures that v verifies and that name d's digest; it fails
// when there is none, naming why each signature was refused.
func Verify(ctx context.Context, d name.Digest, v signature.Verifier, opts ...remote.Option) ([]payload.SimpleContainerImage, error) {
	tag, err := SignatureTag(d)
	if err != nil {
		return nil, err
	}
	_, layers, err := readLayers(ctx, tag, opts)
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%s: %w (%s does not exist)", d, ErrNotSigned, tag.TagStr())
	}
	var ok []payload.SimpleContainerImage
	var why []error
	for i, l := range layers {
		p, err := checkSignature(d, v, l)
		if err != nil {
			why = append(why, fmt.Errorf("signature %d: %w", i, err))
			continue
		}
		ok = append(ok, p)
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("%s: no signature verifies with the key: %w", d, errors.Join(why...))
	}
	return ok, nil
}

func checkSignature(d name.Digest, v signature.Verifier, l layer) (payload.SimpleContainerImage, error) {
	var p payload.SimpleContainerImage
	if l.mediaType != SimpleSigningMediaType {
		return p, fmt.Errorf("media type %s, not %s", l.mediaType, SimpleSigningMediaType)
	}
	if err := verifyLayer(v, l); err != nil {
		return p, err
	}
	if err := json.Unmarshal(l.data, &p); err != nil {
		return p, fmt.Errorf("payload: %w", err)
	}
	if p.Critical.Type != payload.CosignSignatureType {
		return p, fmt.Errorf("payload type %q, not %q", p.Critical.Type, payload.CosignSignatureType)
	}
	if p.Critical.Image.DockerManifestDigest != d.DigestStr() {
		return p, fmt.Errorf("the signed payload names %s, not %s", p.Critical.Image.DockerManifestDigest, d.DigestStr())
	}
	return p, nil
}

// VerifySPDX returns the in-toto statements of d's attestations that v verifies, whose predicate
// type is SPDX and one of whose subjects is d; it fails when there is none, naming why each
// attestation was refused.
func VerifySPDX(ctx context.Context, d name.Digest, v signature.Verifier, opts ...remote.Option) ([]Statement, error) {
	tag, err := AttestationTag(d)
	if err != nil {
		return nil, err
	}
	_, layers, err := readLayers(ctx, tag, opts)
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%s: %w (%s does not exist)", d, ErrNotSigned, tag.TagStr())
	}
	want, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return nil, err
	}
	var ok []Statement
	var why []error
	for i, l := range layers {
		st, err := checkStatement(want, v, l)
		if err != nil {
			why = append(why, fmt.Errorf("attestation %d: %w", i, err))
			continue
		}
		ok = append(ok, st)
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("%s: no SPDX attestation verifies with the key: %w", d, errors.Join(why...))
	}
	return ok, nil
}

func checkStatement(want v1.Hash, v signature.Verifier, l layer) (Statement, error) {
	var st Statement
	p, err := verifyEnvelope(v, l)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(p, &st); err != nil {
		return st, fmt.Errorf("statement: %w", err)
	}
	if st.PredicateType != SPDXPredicateType {
		return st, fmt.Errorf("predicate type %q, not %q", st.PredicateType, SPDXPredicateType)
	}
	for _, s := range st.Subject {
		if s.Digest[want.Algorithm] == want.Hex {
			return st, nil
		}
	}
	return st, fmt.Errorf("no subject of the statement is %s", want)
}
