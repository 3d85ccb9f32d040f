// Package y is test data of m.
package y
