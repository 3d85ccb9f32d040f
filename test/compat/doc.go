// Package compat proves that the opentelemetry.io API types of this project are compatible with
// upstream's published Go types (github.com/open-telemetry/opentelemetry-operator/apis). It is a
// separate module so that upstream's module stays out of the product's go.mod. It has no
// non-test code.
package compat
