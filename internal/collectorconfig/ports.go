package collectorconfig

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// maxPortNameLength is the longest name a container or Service port may have.
const maxPortNameLength = 15

// Ports are the ports a config listens on, split by the Service that exposes them.
type Ports struct {
	// Service holds the ports of used receivers and exporters (the <name>-collector Service),
	// sorted by name.
	Service []corev1.ServicePort
	// Extension holds the ports of used extensions (the <name>-collector-extension Service), sorted by name.
	Extension []corev1.ServicePort
	// Warnings describe port names that had to be replaced by port-<number>.
	Warnings []string
}

// portOrigin is an inferred port and where it comes from, for validation messages.
type portOrigin struct {
	port corev1.ServicePort
	comp Component
	// path points at the endpoint field the port was read from, or at the component (or protocol)
	// when the default port is used.
	path relPath
	// renamed is set when the natural port name could not be used.
	renamed string
	// err is set when the endpoint could not be parsed; addr is then the endpoint.
	err  error
	addr string
}

// InferPorts returns the ports of the used components: receivers and exporters for the main
// Service, extensions for the extension Service. Only used components count; scrapers,
// processors and connectors have no port.
func InferPorts(c *Config) Ports {
	var out Ports
	svc := c.portOrigins(KindReceiver, KindExporter)
	ext := c.portOrigins(KindExtension)
	for _, list := range [][]portOrigin{svc, ext} {
		for _, o := range list {
			if o.renamed != "" {
				out.Warnings = append(out.Warnings, o.renamed)
			}
		}
	}
	out.Service = servicePorts(svc)
	out.Extension = servicePorts(ext)
	return out
}

func servicePorts(list []portOrigin) []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, o := range list {
		if o.err == nil {
			out = append(out, o.port)
		}
	}
	return out
}

// portOrigins infers the ports of the used components of the given kinds, sorted by port name.
func (c *Config) portOrigins(kinds ...Kind) []portOrigin {
	var out []portOrigin
	for _, kind := range kinds {
		for _, comp := range c.UsedComponents(kind) {
			out = append(out, componentPorts(comp)...)
		}
	}
	sortPortOrigins(out)
	return out
}

// componentPorts infers the ports of one component from its configuration and known defaults.
func componentPorts(comp Component) []portOrigin {
	s := specFor(comp.Kind, comp.Type)
	base := relPath{comp.Kind.Section(), comp.ID}
	cfg := comp.configMap()
	switch s.style {
	case styleSingle:
		return singlePort(comp, s.ports[0], comp.ID, cfg, base)
	case styleHTTP:
		return singlePort(comp, s.ports[0], comp.ID, getMap(cfg, "http"), base.child("http"))
	case styleMulti:
		protocols := getMap(cfg, "protocols")
		var out []portOrigin
		for _, proto := range sortedKeys(protocols) {
			for _, def := range s.ports {
				if def.protocol == proto {
					pcfg, _ := protocols[proto].(map[string]any)
					out = append(out, singlePort(comp, def, comp.ID+"-"+proto, pcfg,
						base.child("protocols", proto))...)
				}
			}
		}
		return out
	}
	return nil
}

// listenAddress returns the endpoint (or, when it is empty, the listen_address) of a component
// config, and the field it came from.
func listenAddress(cfg map[string]any, path relPath) (string, relPath) {
	if ep := getString(cfg, "endpoint"); ep != "" {
		return ep, path.child("endpoint")
	}
	if la := getString(cfg, "listen_address"); la != "" {
		return la, path.child("listen_address")
	}
	return "", path
}

func singlePort(comp Component, def portDef, baseName string, cfg map[string]any, path relPath) []portOrigin {
	addr, addrPath := listenAddress(cfg, path)
	port := def.port
	origin := portOrigin{comp: comp, path: path}
	if addr != "" {
		p, found, err := endpointPort(addr)
		switch {
		case err != nil:
			origin.err = err
			origin.addr = addr
			origin.path = addrPath
		case found:
			port = p
			origin.path = addrPath
		}
	}
	if port == 0 && origin.err == nil {
		return nil
	}
	name, renamed := PortName(baseName, port)
	if renamed {
		origin.renamed = fmt.Sprintf("port name %q of %s %q is longer than %d characters or not a valid port name; using %q",
			baseName, comp.Kind, comp.ID, maxPortNameLength, name)
	}
	sp := corev1.ServicePort{Name: name, Port: port, Protocol: def.l4}
	if def.appProtocol != "" {
		app := def.appProtocol
		sp.AppProtocol = &app
	}
	if def.targetPort && port > 0 {
		sp.TargetPort = intstr.FromInt32(port)
	}
	origin.port = sp
	return []portOrigin{origin}
}

// PortName returns the Service port name for a component (or component-protocol) id: '/' and '_'
// become '-' and letters are lowercased. When the result is longer than 15 characters or otherwise
// not a valid port name, it is "port-<number>" and renamed is true.
func PortName(id string, port int32) (name string, renamed bool) {
	candidate := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(id))
	if len(id) > maxPortNameLength || !validPortName(candidate) {
		return "port-" + strconv.Itoa(int(port)), true
	}
	return candidate, false
}

// validPortName is Kubernetes' IANA service name rule: 1-15 characters of a-z, 0-9 and '-', at
// least one letter, no leading, trailing or doubled '-'.
func validPortName(s string) bool {
	if s == "" || len(s) > maxPortNameLength || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= 'a' && ch <= 'z':
			letter = true
		case ch >= '0' && ch <= '9', ch == '-':
		default:
			return false
		}
	}
	return letter
}

// portKey identifies a port the way Kubernetes does: number and protocol, empty meaning TCP.
type portKey struct {
	port     int32
	protocol corev1.Protocol
}

func keyOf(p corev1.ServicePort) portKey {
	proto := p.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	return portKey{port: p.Port, protocol: proto}
}

// MergePorts combines the user's spec.ports with inferred ports the way upstream does: the user's
// ports come first, in their order; an inferred port whose number and protocol a user port already
// has is dropped; an inferred port whose name a user port already has is renamed port-<number>,
// or dropped when that name is taken too. The returned warnings describe what was dropped.
func MergePorts(user, inferred []corev1.ServicePort) ([]corev1.ServicePort, []string) {
	if len(user) == 0 {
		return append([]corev1.ServicePort(nil), inferred...), nil
	}
	numbers := map[portKey]bool{}
	names := map[string]bool{}
	out := make([]corev1.ServicePort, 0, len(user)+len(inferred))
	for _, p := range user {
		numbers[keyOf(p)] = true
		names[p.Name] = true
		out = append(out, p)
	}
	var warnings []string
	for _, p := range inferred {
		if numbers[keyOf(p)] {
			continue
		}
		if names[p.Name] {
			fallback := "port-" + strconv.Itoa(int(p.Port))
			if names[fallback] {
				warnings = append(warnings, fmt.Sprintf(
					"inferred port %q (%d) is skipped: spec.ports already uses the names %q and %q", p.Name, p.Port, p.Name, fallback))
				continue
			}
			p.Name = fallback
		}
		out = append(out, p)
	}
	return out, warnings
}
