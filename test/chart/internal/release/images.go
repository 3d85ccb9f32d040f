package release

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/otelop/otelop/internal/imagebuild"
	"github.com/otelop/otelop/internal/sbom"
)

// SBOMs writes one SPDX 2.3 JSON document per platform binary of the OCI layout of image name
// (layoutDir) into out, named <name>-<os>-<arch>.spdx.json, from the binary the image holds at
// /usr/local/bin/<name> (imagebuild.BinDir). It returns the files written.
func SBOMs(layoutDir, name, version string, created time.Time, out string) ([]string, error) {
	idx, err := imagebuild.ReadLayout(layoutDir)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, desc := range im.Manifests {
		if desc.Platform == nil {
			return nil, fmt.Errorf("%s: index entry %s has no platform", layoutDir, desc.Digest)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		platform := desc.Platform.OS + "-" + desc.Platform.Architecture
		var bin []byte
		for _, l := range layers {
			if bin, err = fileInLayer(l.Uncompressed, path.Join(imagebuild.BinDir, name)); err != nil {
				return nil, fmt.Errorf("%s %s: %w", name, platform, err)
			}
			if bin != nil {
				break
			}
		}
		if bin == nil {
			return nil, fmt.Errorf("%s %s: no layer holds %s", name, platform, path.Join(imagebuild.BinDir, name))
		}
		doc, err := sbom.FromBinary(bin, sbom.Options{Name: name, Version: version, Created: created,
			Tool: "otelop make release"})
		if err != nil {
			return nil, err
		}
		doc.Name = name + "-" + version + "-" + platform
		doc.DocumentNamespace += "-" + platform
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := sbom.Validate(doc); err != nil {
			return nil, err
		}
		file := filepath.Join(out, name+"-"+platform+".spdx.json")
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return files, nil
}

// fileInLayer returns the content of the file at abs in the layer, or nil when it has none.
func fileInLayer(open func() (io.ReadCloser, error), abs string) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg && path.Clean("/"+h.Name) == abs {
			return io.ReadAll(tr)
		}
	}
}
