package instrumentation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/inject"
	"github.com/otelop/otelop/internal/naming"
)

// injectionOrder is upstream's order of injection, which decides the order of the injected init
// containers and environment variables when a pod gets several languages.
var injectionOrder = []Language{Java, NodeJS, Python, DotNet, Go, ApacheHttpd, Nginx, SDK}

// Input is everything an injection depends on.
type Input struct {
	// Pod is the pod being admitted; it is not modified.
	Pod *corev1.Pod
	// Namespace is the metadata (name, annotations) of the pod's namespace.
	Namespace metav1.ObjectMeta
	// Owners is the pod's owner chain: its owner references, followed by the owners of its
	// ReplicaSet or Job (see NeedsLookup).
	Owners []Owner
	// Instrumentations are the resolved Instrumentation of each requested language.
	Instrumentations map[Language]*v1alpha1.Instrumentation
	// Options are the operator's switches.
	Options Options
}

// Result is the outcome of Inject.
type Result struct {
	// Pod is the mutated pod (a copy of Input.Pod when nothing was injected).
	Pod *corev1.Pod
	// Injected lists the languages injected into at least one container, also recorded in the
	// pod's InjectedAnnotation.
	Injected []Injected
	// Warnings say, for the client and an Event, what was asked for and not done, and why.
	Warnings []string
}

// Changed reports whether the pod was mutated.
func (r Result) Changed() bool { return len(r.Injected) > 0 }

// Inject instruments a copy of in.Pod with the requested languages, as upstream's pod mutator
// does, with these differences: every request that cannot be honoured produces a warning instead
// of a log line; a container name that matches no container is skipped with a warning instead of
// instrumenting the first container; and the pod is marked with InjectedAnnotation. A pod that is
// already instrumented is left alone.
func Inject(in Input) Result {
	pod := in.Pod.DeepCopy()
	res := Result{Pod: pod}
	b := &builder{in: in, pod: pod, namespace: in.Namespace.Name}
	if b.namespace == "" {
		b.namespace = pod.Namespace
	}
	var langs []Language
	for _, lang := range injectionOrder {
		inst := in.Instrumentations[lang]
		switch {
		case inst == nil:
		case !in.Options.Enabled(lang):
			res.Warnings = append(res.Warnings, notInjected(lang, DisabledMessage(lang)))
		case lang == Go && !in.Options.GoAllowedIn(in.Namespace):
			res.Warnings = append(res.Warnings, notInjected(lang, GoNotAllowedMessage(b.namespace)))
		default:
			langs = append(langs, lang)
		}
	}
	if len(langs) == 0 {
		return res
	}
	if done, why := Instrumented(pod); done {
		if why != "" {
			res.Warnings = append(res.Warnings, "instrumentation not injected: "+why)
		}
		return res
	}
	if len(pod.Spec.Containers) == 0 {
		res.Warnings = append(res.Warnings, "instrumentation not injected: the pod has no containers")
		return res
	}
	targets, err := b.targets(langs)
	if err != nil {
		res.Warnings = append(res.Warnings, "instrumentation not injected: "+err.Error())
		return res
	}
	for _, lang := range langs {
		inst := in.Instrumentations[lang]
		if n := b.injectLanguage(lang, inst, targets[lang]); n > 0 {
			res.Injected = append(res.Injected, Injected{
				Language:        lang,
				Instrumentation: types.NamespacedName{Namespace: inst.Namespace, Name: inst.Name},
				Generation:      inst.Generation,
			})
		}
	}
	res.Pod = b.pod
	res.Warnings = append(res.Warnings, b.warnings...)
	if len(res.Injected) > 0 {
		if res.Pod.Annotations == nil {
			res.Pod.Annotations = map[string]string{}
		}
		res.Pod.Annotations[InjectedAnnotation] = FormatInjected(res.Injected)
	}
	return res
}

// NotInjected is the warning that lang was requested and not injected, and why.
func NotInjected(lang Language, why string) string { return notInjected(lang, why) }

func notInjected(lang Language, why string) string {
	return fmt.Sprintf("%s instrumentation not injected: %s", lang, why)
}

// Instrumented reports whether pod already carries an injection: our InjectedAnnotation, one of
// the agent init containers, the Go agent, or (upstream's test) a container other than the
// collector sidecar that sets OTEL_RESOURCE_ATTRIBUTES_NODE_NAME. For the last case, why says so, since the variable may be
// the user's own.
func Instrumented(pod *corev1.Pod) (bool, string) {
	if _, ok := pod.Annotations[InjectedAnnotation]; ok {
		return true, ""
	}
	for _, c := range pod.Spec.InitContainers {
		if slices.Contains(agentInitContainers, c.Name) {
			return true, ""
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == AgentName {
			return true, ""
		}
	}
	for _, c := range pod.Spec.Containers {
		// The collector sidecar (otc-container) sets the variable too.
		if c.Name != naming.Container && hasEnv(c.Env, EnvNodeName) {
			return true, fmt.Sprintf("container %q already sets %s, so the pod is taken as instrumented", c.Name, EnvNodeName)
		}
	}
	return false, ""
}

// builder mutates one pod.
type builder struct {
	in        Input
	pod       *corev1.Pod
	namespace string
	warnings  []string
}

func (b *builder) value(key string) string {
	return strings.TrimSpace(inject.Resolve(b.pod.Annotations[key], b.in.Namespace.Annotations[key]))
}

// targets returns the containers of each language: container-names for every language, plus with
// multi-instrumentation <language>-container-names, checked as upstream checks them.
func (b *builder) targets(langs []Language) (map[Language][]string, error) {
	common, err := ParseContainerNames(ContainerNamesAnnotation, b.value(ContainerNamesAnnotation))
	if err != nil {
		return nil, err
	}
	out := map[Language][]string{}
	for _, l := range langs {
		out[l] = slices.Clone(common)
	}
	if !b.in.Options.MultiInstrumentation {
		return out, nil
	}
	var all []string
	without := 0
	for _, l := range langs {
		key := ContainerNamesAnnotationOf(l)
		own, err := ParseContainerNames(key, b.value(key))
		if err != nil {
			return nil, err
		}
		out[l] = append(out[l], own...)
		all = append(all, out[l]...)
		if len(out[l]) == 0 {
			without++
		}
	}
	if dups := duplicates(all); len(dups) > 0 {
		return nil, fmt.Errorf("containers %s are named for more than one language (or twice); each container takes one language", strings.Join(dups, ", "))
	}
	if len(langs) > 1 && without > 0 {
		return nil, fmt.Errorf("%d languages are requested (%s): with multi-instrumentation each needs its own %s annotation",
			len(langs), joinLanguages(langs), AnnotationPrefix+"<language>-container-names")
	}
	return out, nil
}

func duplicates(names []string) []string {
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	var out []string
	for n, c := range seen {
		if c > 1 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func joinLanguages(langs []Language) string {
	s := make([]string, len(langs))
	for i, l := range langs {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}

// injectLanguage injects lang into each of names (the first container when empty) and returns
// into how many it succeeded. A container that cannot take it is left as it was, with a warning.
func (b *builder) injectLanguage(lang Language, inst *v1alpha1.Instrumentation, names []string) int {
	if len(names) == 0 {
		names = []string{b.pod.Spec.Containers[0].Name}
	}
	if lang == Go {
		if len(names) > 1 {
			b.warnings = append(b.warnings, notInjected(lang, fmt.Sprintf("Go instrumentation takes one container, %d are named (%s)", len(names), strings.Join(names, ", "))))
			return 0
		}
	}
	n := 0
	for _, name := range names {
		c, isInit := b.container(name)
		if c == nil {
			b.warnings = append(b.warnings, notInjected(lang, fmt.Sprintf("the pod has no container %q", name)))
			continue
		}
		if isInit && !supportsInitTarget(lang) {
			b.warnings = append(b.warnings, notInjected(lang, fmt.Sprintf("%q is an init container, which %s instrumentation does not support", name, lang)))
			continue
		}
		saved := b.pod.DeepCopy()
		if err := b.injectInto(lang, inst, name); err != nil {
			b.pod = saved
			b.warnings = append(b.warnings, notInjected(lang, fmt.Sprintf("container %q: %s", name, err.Error())))
			continue
		}
		n++
	}
	return n
}

func supportsInitTarget(lang Language) bool {
	switch lang {
	case Java, NodeJS, Python, DotNet, SDK:
		return true
	}
	return false
}

func (b *builder) injectInto(lang Language, inst *v1alpha1.Instrumentation, name string) error {
	switch lang {
	case Java:
		return b.java(inst, name)
	case NodeJS:
		return b.nodejs(inst, name)
	case Python:
		return b.python(inst, name)
	case DotNet:
		return b.dotnet(inst, name)
	case Go:
		return b.golang(inst, name)
	case ApacheHttpd:
		return b.apache(inst, name)
	case Nginx:
		return b.nginx(inst, name)
	case SDK:
		c := b.mustContainer(name)
		commonEnv(inst, c)
		b.sdkConfig(inst, c, c)
		return nil
	}
	return fmt.Errorf("unknown language %q", lang)
}

// container returns the container or init container called name, and whether it is an init
// container. The pointer is valid until the next change of the pod's container lists.
func (b *builder) container(name string) (*corev1.Container, bool) {
	for i := range b.pod.Spec.Containers {
		if b.pod.Spec.Containers[i].Name == name {
			return &b.pod.Spec.Containers[i], false
		}
	}
	for i := range b.pod.Spec.InitContainers {
		if b.pod.Spec.InitContainers[i].Name == name {
			return &b.pod.Spec.InitContainers[i], true
		}
	}
	return nil, false
}

func (b *builder) mustContainer(name string) *corev1.Container {
	c, _ := b.container(name)
	return c
}

func (b *builder) hasInitContainer(name string) bool {
	return slices.ContainsFunc(b.pod.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == name })
}

// addInitContainer adds c once: before target when target is an init container (so that the
// agent is in place when it runs), else at the end. When c is already there but after target (an
// earlier container of the list was a regular one), it is moved before target.
func (b *builder) addInitContainer(c corev1.Container, target string) {
	ics := b.pod.Spec.InitContainers
	at := slices.IndexFunc(ics, func(ic corev1.Container) bool { return ic.Name == target })
	if have := slices.IndexFunc(ics, func(ic corev1.Container) bool { return ic.Name == c.Name }); have >= 0 {
		if at >= 0 && have > at {
			existing := ics[have]
			ics = slices.Delete(ics, have, have+1)
			b.pod.Spec.InitContainers = slices.Insert(ics, at, existing)
		}
		return
	}
	if at >= 0 {
		b.pod.Spec.InitContainers = slices.Insert(ics, at, c)
		return
	}
	b.pod.Spec.InitContainers = append(ics, c)
}

// addVolume adds v unless the pod has a volume of that name.
func (b *builder) addVolume(v corev1.Volume) {
	for _, have := range b.pod.Spec.Volumes {
		if have.Name == v.Name {
			return
		}
	}
	b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, v)
}
