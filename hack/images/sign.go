package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/otelop/otelop/internal/imagesign"
)

const signUsage = `usage: images keygen [--out DIR]
       images sign   --key KEY      --registry REGISTRY --version VERSION [--sboms DIR] [--chart REF] BINARY...
       images verify --key KEY.pub  --registry REGISTRY --version VERSION [--sboms DIR] [--chart REF] BINARY...

  keygen  write an ECDSA P-256 key pair to DIR/cosign.key and DIR/cosign.pub (encrypted as cosign
          does when COSIGN_PASSWORD is set, plain PKCS#8 otherwise)
  sign    sign REGISTRY/BINARY:VERSION by digest, and the chart REF, in cosign's format, and attest
          DIR/BINARY-<os>-<arch>.spdx.json to each image
  verify  check those signatures (and with --sboms, an SPDX attestation per platform) with KEY.pub

Flags:
`

// runSigning runs keygen, sign and verify (see signUsage).
func runSigning(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, signUsage); fs.PrintDefaults() }
	key := fs.String("key", "", "PEM private key (sign) or public key (verify); an encrypted key's password is read from $COSIGN_PASSWORD.")
	registry := fs.String("registry", "", "Registry and prefix the images were pushed to.")
	version := fs.String("version", "", "The images' tag.")
	sboms := fs.String("sboms", "", "Folder of the SPDX SBOMs of make release (bin/release/sbom): attest them (sign), require them (verify).")
	chart := fs.String("chart", "", "The pushed chart, [oci://]<registry>/<path>/<name>:<version>.")
	out := fs.String("out", ".", "keygen: folder for cosign.key and cosign.pub.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if verb == "keygen" {
		return keygen(*out, stdout)
	}
	if *key == "" {
		return fmt.Errorf("%s needs --key", verb)
	}
	r := imagesign.Release{Registry: *registry, Version: *version, Binaries: fs.Args(), SBOMDir: *sboms, Chart: *chart,
		Progress: stdout, Options: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}}
	start := time.Now()
	if verb == "sign" {
		s, err := imagesign.LoadSigner(*key)
		if err != nil {
			return err
		}
		res, err := imagesign.SignRelease(ctx, r, s)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "==> signed %d artifacts with %s in %s\n", len(res), *key, time.Since(start).Round(time.Second))
		return nil
	}
	v, err := imagesign.LoadVerifier(*key)
	if err != nil {
		return err
	}
	res, err := imagesign.VerifyRelease(ctx, r, v)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "==> verified %d artifacts with %s in %s\n", len(res), *key, time.Since(start).Round(time.Second))
	return nil
}

func keygen(dir string, stdout io.Writer) error {
	var password []byte
	if p, ok := os.LookupEnv(imagesign.PasswordEnv); ok {
		password = []byte(p)
	}
	priv, pub, err := imagesign.GenerateKeyPair(password)
	if err != nil {
		return err
	}
	keyFile, pubFile := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	for _, f := range []string{keyFile, pubFile} {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s exists: not overwritten", f)
		}
	}
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(pubFile, pub, 0o644); err != nil {
		return err
	}
	enc := "unencrypted: keep it secret"
	if password != nil {
		enc = "encrypted with $" + imagesign.PasswordEnv
	}
	fmt.Fprintf(stdout, "wrote %s (ECDSA P-256, %s) and %s\n", keyFile, enc, pubFile)
	return nil
}
