package simcluster

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for server that authenticates with the client certificate
// <user>.crt/<user>.key of the PKI.
func (p *pki) writeKubeconfig(path, server, user string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["simcluster"] = &clientcmdapi.Cluster{
		Server:               server,
		CertificateAuthority: p.path("ca.crt"),
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificate: p.path(user + ".crt"),
		ClientKey:         p.path(user + ".key"),
	}
	cfg.Contexts["simcluster"] = &clientcmdapi.Context{Cluster: "simcluster", AuthInfo: user}
	cfg.CurrentContext = "simcluster"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
