package instrumentation

import (
	corev1 "k8s.io/api/core/v1"
)

// archARM64 is the kubernetes.io/arch label value of 64-bit ARM nodes.
const archARM64 = "arm64"

// nodeArch is the CPU architecture (the kubernetes.io/arch node label value) of every node the
// pod's spec lets it be scheduled on, by its nodeSelector and its required node affinity, or ""
// when the spec allows more than one architecture or does not say. Preferred affinity and
// tolerations do not restrict where the pod runs, so they are not read.
//
// The answer errs towards "": whatever the spec says that this function cannot follow (NotIn
// without In, Exists, DoesNotExist, terms on other labels or on fields) counts as allowing any
// architecture, so a single architecture is returned only when the pod cannot run anywhere else.
func nodeArch(spec *corev1.PodSpec) string {
	var allowed archSet // nil: any architecture
	if v, ok := spec.NodeSelector[corev1.LabelArchStable]; ok {
		allowed = archSet{v: true}
	}
	allowed = allowed.intersect(requiredArchs(spec.Affinity))
	if len(allowed) == 1 {
		for v := range allowed {
			return v
		}
	}
	return ""
}

// archSet is a set of architectures; nil stands for every architecture.
type archSet map[string]bool

// intersect returns the architectures in both s and o, as a new set unless one is nil.
func (s archSet) intersect(o archSet) archSet {
	switch {
	case s == nil:
		return o
	case o == nil:
		return s
	}
	out := archSet{}
	for v := range s {
		if o[v] {
			out[v] = true
		}
	}
	return out
}

// requiredArchs is the union of the architectures each required node selector term allows (the
// terms are alternatives), nil when there are none or one of them allows any.
func requiredArchs(a *corev1.Affinity) archSet {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nil
	}
	union := archSet{}
	for _, t := range terms {
		s := termArchs(t)
		if s == nil {
			return nil
		}
		for v := range s {
			union[v] = true
		}
	}
	return union
}

// termArchs is what one term allows: the values every In expression on kubernetes.io/arch lists
// (its expressions must all hold), less those a NotIn lists; nil when no In restricts it.
func termArchs(t corev1.NodeSelectorTerm) archSet {
	var in archSet
	var notIn []string
	for _, e := range t.MatchExpressions {
		if e.Key != corev1.LabelArchStable {
			continue
		}
		switch e.Operator {
		case corev1.NodeSelectorOpIn:
			values := archSet{}
			for _, v := range e.Values {
				values[v] = true
			}
			in = in.intersect(values)
		case corev1.NodeSelectorOpNotIn:
			notIn = append(notIn, e.Values...)
		}
	}
	for _, v := range notIn {
		delete(in, v)
	}
	return in
}
