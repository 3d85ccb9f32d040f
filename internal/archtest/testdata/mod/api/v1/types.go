// Package v1 is a synthetic API package.
package v1

// Thing is a synthetic type.
type Thing struct{}
