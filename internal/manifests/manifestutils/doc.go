// Package manifestutils holds what every generated object shares: the upstream-compatible labels,
// selector labels and annotations, and the operator's label and annotation filters.
package manifestutils
