//go:build tools

// Package tools pins the Kubernetes control-plane commands that the project's tests run.
// It is a separate module so that k8s.io/kubernetes never becomes a dependency of the product.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
