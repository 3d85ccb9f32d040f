package instrumentation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// NewAppsREST returns a client of the apps/v1 API that asks for JSON, for Scanner.Apps.
// httpClient may be nil (one is made from cfg).
func NewAppsREST(cfg *rest.Config, httpClient *http.Client) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &appsv1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	if httpClient == nil {
		return rest.RESTClientFor(c)
	}
	return rest.RESTClientForConfigAndClient(c, httpClient)
}

// The scan's views of workloads: what it reads of a Deployment, StatefulSet or DaemonSet and
// nothing else. A list page is decoded one item at a time into these, so that the pod
// templates' containers, volumes and the objects' managedFields are skipped as they stream by
// and never held, whatever their size: memory holds one item's JSON at a time, not a page.
type (
	slimMeta struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               types.UID         `json:"uid"`
		Generation        int64             `json:"generation"`
		Annotations       map[string]string `json:"annotations"`
		DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
	}
	slimTemplate struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	slimStrategy struct {
		Type string `json:"type"`
	}
	slimDeployment struct {
		Metadata slimMeta `json:"metadata"`
		Spec     struct {
			Replicas *int32       `json:"replicas"`
			Paused   bool         `json:"paused"`
			Template slimTemplate `json:"template"`
		} `json:"spec"`
		Status appsv1.DeploymentStatus `json:"status"`
	}
	slimStatefulSet struct {
		Metadata slimMeta `json:"metadata"`
		Spec     struct {
			Replicas       *int32       `json:"replicas"`
			UpdateStrategy slimStrategy `json:"updateStrategy"`
			Template       slimTemplate `json:"template"`
		} `json:"spec"`
		Status appsv1.StatefulSetStatus `json:"status"`
	}
	slimDaemonSet struct {
		Metadata slimMeta `json:"metadata"`
		Spec     struct {
			UpdateStrategy slimStrategy `json:"updateStrategy"`
			Template       slimTemplate `json:"template"`
		} `json:"spec"`
		Status appsv1.DaemonSetStatus `json:"status"`
	}
)

func (m *slimMeta) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, Generation: m.Generation,
		Annotations: m.Annotations, DeletionTimestamp: m.DeletionTimestamp}
}

func (t *slimTemplate) podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: t.Metadata.Annotations}}
}

func (d *slimDeployment) object() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: d.Metadata.objectMeta(), Status: d.Status, Spec: appsv1.DeploymentSpec{
		Replicas: d.Spec.Replicas, Paused: d.Spec.Paused, Template: d.Spec.Template.podTemplate()}}
}

func (s *slimStatefulSet) object() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: s.Metadata.objectMeta(), Status: s.Status, Spec: appsv1.StatefulSetSpec{
		Replicas: s.Spec.Replicas, Template: s.Spec.Template.podTemplate(),
		UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.StatefulSetUpdateStrategyType(s.Spec.UpdateStrategy.Type)}}}
}

func (ds *slimDaemonSet) object() *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: ds.Metadata.objectMeta(), Status: ds.Status, Spec: appsv1.DaemonSetSpec{
		Template:       ds.Spec.Template.podTemplate(),
		UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.DaemonSetUpdateStrategyType(ds.Spec.UpdateStrategy.Type)}}}
}

// streamList reads every page of the apps/v1 resource in ns, decoding each item into a T and
// calling each with it.
func streamList[T any](ctx context.Context, s Scanner, resource, ns string, stats *Stats, each func(*T)) error {
	if s.Apps == nil {
		return fmt.Errorf("the scanner has no apps/v1 client")
	}
	limit := s.PageSize
	if limit <= 0 {
		limit = DefaultPageSize
	}
	cont := ""
	for {
		req := s.Apps.Get().Resource(resource).Param("limit", strconv.FormatInt(limit, 10))
		if ns != "" {
			req = req.Namespace(ns)
		}
		if cont != "" {
			req = req.Param("continue", cont)
		}
		body, err := req.Stream(ctx)
		if err != nil {
			return err
		}
		stats.Requests++
		cont, err = decodeList(body, each)
		_ = body.Close()
		if err != nil || cont == "" {
			return err
		}
	}
}

// decodeList decodes a list (a JSON object with metadata and items) from r item by item and
// returns its continue token.
func decodeList[T any](r io.Reader, each func(*T)) (string, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	cont := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "metadata":
			var m metav1.ListMeta
			if err := dec.Decode(&m); err != nil {
				return "", err
			}
			cont = m.Continue
		case "items":
			if err := decodeItems(dec, each); err != nil {
				return "", err
			}
		default:
			var skip json.RawMessage // kind, apiVersion
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	return cont, expectDelim(dec, '}')
}

func decodeItems[T any](dec *json.Decoder, each func(*T)) error {
	tok, err := dec.Token()
	if err != nil || tok == nil { // "items": null
		return err
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("items: want an array, got %v", tok)
	}
	for dec.More() {
		var item T
		if err := dec.Decode(&item); err != nil {
			return err
		}
		each(&item)
	}
	return expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("reading a list: want %v, got %v", want, tok)
	}
	return nil
}
