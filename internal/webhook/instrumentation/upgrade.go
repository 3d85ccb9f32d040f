package instrumentation

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Upgrade moves inst to the current default images, as upstream's startup upgrade does: for every
// enabled language whose image equals its default-auto-instrumentation-<lang>-image annotation
// (the image is the default of the operator that defaulted it) while that annotation is not the
// current default, the image and the annotation become the current default. Images the user set
// are never touched. It returns the names of the languages it upgraded.
func Upgrade(inst *v1alpha1.Instrumentation, opts Options) []string {
	images := opts.Images.withDefaults()
	var upgraded []string
	for _, l := range Languages {
		key := l.DefaultImageAnnotation()
		old, def := inst.Annotations[key], *l.image(&images)
		image := l.parts(&inst.Spec).image
		if old == "" || old == def || *image != old || !opts.enabled(l) {
			continue
		}
		*image = def
		inst.Annotations[key] = def
		upgraded = append(upgraded, l.Name)
	}
	return upgraded
}

// Upgrader is the manager runnable that, once the leader starts, applies Upgrade to every
// Instrumentation and writes those that changed (the write goes through the defaulting and
// validating webhooks). A write that fails is logged and the pass goes on, as upstream.
type Upgrader struct {
	Client   client.Client
	Recorder events.EventRecorder
	Options  Options
}

// NeedLeaderElection makes the pass run on the leader only.
func (u *Upgrader) NeedLeaderElection() bool { return true }

// Start runs one upgrade pass and returns.
func (u *Upgrader) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("instrumentation-upgrade")
	list := &v1alpha1.InstrumentationList{}
	if err := u.Client.List(ctx, list); err != nil {
		log.Error(err, "listing Instrumentations; default images are not upgraded")
		return nil
	}
	for i := range list.Items {
		key := client.ObjectKeyFromObject(&list.Items[i])
		langs, err := u.upgradeOne(ctx, key)
		switch {
		case err != nil:
			log.Error(err, "upgrading default images", "instrumentation", key)
		case len(langs) > 0:
			log.Info("upgraded default images", "instrumentation", key, "languages", langs)
		}
	}
	return nil
}

// retryBackoff spaces the attempts of one upgrade: a conflict, or the webhook not reachable yet
// while the operator's pod is not ready, is retried for about a minute.
var retryBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 7, Cap: 30 * time.Second}

// upgradeOne upgrades one Instrumentation, reading it again before every attempt.
func (u *Upgrader) upgradeOne(ctx context.Context, key client.ObjectKey) ([]string, error) {
	var langs []string
	var inst *v1alpha1.Instrumentation
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, retryBackoff, func(ctx context.Context) (bool, error) {
		current := &v1alpha1.Instrumentation{}
		if err := u.Client.Get(ctx, key, current); err != nil {
			return false, err
		}
		inst = current.DeepCopy()
		langs = Upgrade(inst, u.Options)
		if len(langs) == 0 || equality.Semantic.DeepEqual(inst, current) {
			langs = nil
			return true, nil
		}
		last = u.Client.Update(ctx, inst)
		switch {
		case last == nil:
			return true, nil
		case apierrors.IsNotFound(last), apierrors.IsInvalid(last), apierrors.IsForbidden(last), apierrors.IsBadRequest(last):
			return false, last
		}
		return false, nil
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		if last != nil && wait.Interrupted(err) {
			err = last
		}
		return nil, err
	}
	if len(langs) > 0 && u.Recorder != nil {
		u.Recorder.Eventf(inst, nil, corev1.EventTypeNormal, "Upgraded", "UpgradeDefaultImages",
			"%s", fmt.Sprintf("default images of %s upgraded to the operator's defaults", strings.Join(langs, ", ")))
	}
	return langs, nil
}
