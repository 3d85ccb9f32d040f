package imagesign

import (
	"crypto"
	"crypto/elliptic"
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// PasswordEnv names the variable that holds the password of an encrypted private key (the one
// cosign reads too).
const PasswordEnv = "COSIGN_PASSWORD"

// envPassword returns the password from PasswordEnv; set but empty is the empty password (cosign's
// `COSIGN_PASSWORD= cosign generate-key-pair`), unset is none.
func envPassword(bool) ([]byte, error) {
	if v, ok := os.LookupEnv(PasswordEnv); ok {
		return []byte(v), nil
	}
	return nil, nil
}

// LoadSigner reads the PEM private key at path: PKCS#8 ("PRIVATE KEY"), SEC 1 ("EC PRIVATE KEY"),
// PKCS#1 ("RSA PRIVATE KEY"), or cosign's encrypted key, decrypted with the password in
// COSIGN_PASSWORD. ECDSA and RSA keys sign SHA-256 digests, Ed25519 keys the message.
func LoadSigner(path string) (signature.SignerVerifier, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	if b, _ := pem.Decode(data); b != nil && strings.HasPrefix(b.Type, "ENCRYPTED") {
		if _, ok := os.LookupEnv(PasswordEnv); !ok {
			return nil, fmt.Errorf("signing key %s is encrypted (%s): set %s to its password", path, b.Type, PasswordEnv)
		}
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(data, envPassword)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return sv, nil
}

// LoadVerifier reads the PEM public key ("PUBLIC KEY", as cosign.pub or `openssl pkey -pubout`)
// at path.
func LoadVerifier(path string) (signature.Verifier, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", path, err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", path, err)
	}
	return v, nil
}

// GenerateKeyPair makes an ECDSA P-256 key pair and returns its private key and public key as PEM.
// With a nil password the private key is plain PKCS#8 ("PRIVATE KEY", as openssl writes it);
// with a password (even empty) it is encrypted as cosign encrypts its keys (scrypt and
// secretbox, "ENCRYPTED SIGSTORE PRIVATE KEY"), so `cosign sign --key` can use it as well.
func GenerateKeyPair(password []byte) (priv, pub []byte, err error) {
	var pf cryptoutils.PassFunc
	if password != nil {
		pf = cryptoutils.StaticPasswordFunc(password)
	}
	return cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), pf)
}

// PublicKeyPEM returns the PEM public key of s.
func PublicKeyPEM(s signature.Signer) ([]byte, error) {
	pub, err := s.PublicKey()
	if err != nil {
		return nil, err
	}
	return cryptoutils.MarshalPublicKeyToPEM(pub)
}
