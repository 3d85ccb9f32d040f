// Package imagesign signs pushed images and OCI artifacts (the Helm chart) with a key the user
// gives, offline, and attaches each image's SPDX SBOM as a signed attestation; and it verifies both
// with the public key. It writes cosign's tag-based layout, so that `cosign verify --key cosign.pub
// --insecure-ignore-tlog <image>` and `cosign verify-attestation --key cosign.pub --type spdxjson
// --insecure-ignore-tlog <image>` accept what it wrote:
//
//   - signature: an OCI image manifest at <repo>:sha256-<hex>.sig (the signed manifest's digest),
//     one layer per signature, of media type application/vnd.dev.cosign.simplesigning.v1+json,
//     holding the simple-signing payload (the signed digest and the repository), with the
//     base64 signature of that payload in the layer annotation dev.cosignproject.cosign/signature;
//   - attestation: an OCI image manifest at <repo>:sha256-<hex>.att, one layer per attestation, of
//     media type application/vnd.dsse.envelope.v1+json, holding a DSSE envelope whose payload is an
//     in-toto statement (subject: the signed digest; predicate: the SPDX document).
//
// No transparency log and no certificate authority take part: the trust is the public key alone.
// Keys are PEM files: PKCS#8, SEC 1 or PKCS#1 private keys (e.g. from openssl), or cosign's
// encrypted keys (password in COSIGN_PASSWORD). The cryptography is sigstore's Go library
// (github.com/sigstore/sigstore: signature, dsse, cryptoutils); the registry client is
// go-containerregistry. See docs/signing.md.
package imagesign
