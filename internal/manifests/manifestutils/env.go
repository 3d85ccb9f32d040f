package manifestutils

import corev1 "k8s.io/api/core/v1"

// ComponentEnv is the environment of the OpAMP bridge's and the target allocator's container, in
// upstream's order: user (spec.env), then namespaceEnv from metadata.namespace, GOMEMLIMIT and
// GOMAXPROCS from the limits of container when golangFlags, and the operator's proxy variables;
// each added variable only when none of its name is there already.
func ComponentEnv(user []corev1.EnvVar, namespaceEnv string, golangFlags bool, container string, proxy []corev1.EnvVar) []corev1.EnvVar {
	env := make([]corev1.EnvVar, 0, len(user)+3+len(proxy))
	env = append(env, user...)
	add := func(e corev1.EnvVar) {
		if !HasEnv(env, e.Name) {
			env = append(env, e)
		}
	}
	add(corev1.EnvVar{Name: namespaceEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"},
	}})
	if golangFlags {
		for _, v := range []struct{ name, resource string }{{"GOMEMLIMIT", "limits.memory"}, {"GOMAXPROCS", "limits.cpu"}} {
			add(corev1.EnvVar{Name: v.name, ValueFrom: &corev1.EnvVarSource{
				ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: v.resource, ContainerName: container},
			}})
		}
	}
	for _, v := range proxy {
		add(v)
	}
	return env
}

// HasEnv tells whether env has a variable called name.
func HasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}
