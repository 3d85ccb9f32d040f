// Package x belongs to a nested module.
package x
