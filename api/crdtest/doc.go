// Package crdtest holds the tests that install the generated opentelemetry.io CRDs into a real
// kube-apiserver and check that the samples apply and that invalid objects are rejected with
// the offending field path. It has no non-test code.
package crdtest
