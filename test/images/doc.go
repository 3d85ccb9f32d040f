// Package images proves the project's images as shipped: it builds them with internal/imagebuild
// (as `make images` does), pushes them to a registry served in the test from
// github.com/distribution/distribution/v3 on 127.0.0.1, pulls them back by digest, checks their
// configuration, unpacks them and runs each binary's --version from the unpacked file system. It
// signs them and the chart with a key made in the test and attests their SBOMs
// (internal/imagesign, as `make push SIGNING_KEY=...` does), verifies that with the public key,
// refuses another key and tampered signatures, and checks that each attested SBOM names the
// modules of the binary in its image. It builds them a second time to prove that the digests are
// reproducible. It is a separate module so that the registry's many dependencies stay out of the
// product's go.mod. It has no non-test code.
package images
