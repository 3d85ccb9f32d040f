package collector

import (
	"context"
	"fmt"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
)

// access is one flattened permission of a PolicyRule: a verb on a resource (in a group, optionally
// a named object) or on a non-resource URL.
type access struct {
	verb, group, resource, name, url string
}

func (a access) String() string {
	if a.url != "" {
		return a.verb + " " + a.url
	}
	res := a.resource
	if a.group != "" {
		res += "." + a.group
	}
	if a.name != "" {
		res += "/" + a.name
	}
	return a.verb + " " + res
}

// flatten turns rules into the single permissions a SubjectAccessReview can check, in a stable
// order and without duplicates.
func flatten(rules []rbacv1.PolicyRule) []access {
	seen := map[access]bool{}
	var out []access
	add := func(a access) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, r := range rules {
		for _, verb := range r.Verbs {
			for _, url := range r.NonResourceURLs {
				add(access{verb: verb, url: url})
			}
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					for _, name := range names {
						add(access{verb: verb, group: group, resource: res, name: name})
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// maxReviews bounds the SubjectAccessReviews one admission request may cause. The permissions come
// from the config (k8sobjects lists resources, one per entry), so without a bound a single
// collector could make the webhook send thousands of reviews and time out.
const maxReviews = 100

// tooManyReviewsError says a config needs more distinct permissions than maxReviews.
type tooManyReviewsError struct{ n int }

func (e tooManyReviewsError) Error() string {
	return fmt.Sprintf("the components in this config need %d distinct cluster permissions (verb, resource, name) that are not already granted; "+
		"at most %d are checked per request: list fewer objects (k8sobjects) or add them in several updates", e.n, maxReviews)
}

// missingAccess returns, sorted, the permissions among want that user does not hold cluster-wide,
// leaving out those in have (already granted before an update). Each check is a
// SubjectAccessReview, which the API server evaluates without storing anything.
func missingAccess(ctx context.Context, c client.Client, user authenticationv1.UserInfo, want, have []rbacv1.PolicyRule) ([]string, error) {
	granted := map[access]bool{}
	for _, a := range flatten(have) {
		granted[a] = true
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	var check []access
	for _, a := range flatten(want) {
		if !granted[a] {
			check = append(check, a)
		}
	}
	if len(check) > maxReviews {
		return nil, tooManyReviewsError{n: len(check)}
	}
	var missing []string
	for _, a := range check {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		}}
		if a.url != "" {
			sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Verb: a.verb, Path: a.url}
		} else {
			sar.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource, Name: a.name}
		}
		if err := c.Create(ctx, sar); err != nil {
			return nil, fmt.Errorf("checking whether %s may %s: %w", user.Username, a, err)
		}
		if !sar.Status.Allowed {
			missing = append(missing, a.String())
		}
	}
	return missing, nil
}

// joinLimited joins up to n items and says how many more there are.
func joinLimited(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// prometheusCRRules are the permissions a target allocator needs to discover scrape targets from
// Prometheus Operator CRs; upstream warns when its ServiceAccount lacks any of them.
var prometheusCRRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"servicemonitors", "podmonitors"}, Verbs: []string{"*"}},
	{APIGroups: []string{""}, Resources: []string{"nodes", "nodes/metrics", "services", "endpoints", "pods", "namespaces"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch"}},
	{NonResourceURLs: []string{"/metrics", "/api", "/api/*", "/apis", "/apis/*"}, Verbs: []string{"get"}},
}

// serviceAccountUser is how the API server authenticates a ServiceAccount.
func serviceAccountUser(namespace, name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{
		Username: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// targetAllocatorServiceAccount is the ServiceAccount the target allocator of a collector runs as.
func targetAllocatorServiceAccount(otelcol *v1beta1.OpenTelemetryCollector) string {
	if sa := otelcol.Spec.TargetAllocator.ServiceAccount; sa != "" {
		return sa
	}
	name := otelcol.Name
	const suffix = "-targetallocator"
	if len(name) > 63-len(suffix) {
		name = strings.TrimRight(name[:63-len(suffix)], "-.")
	}
	return name + suffix
}
