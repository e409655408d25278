package configmap

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// configMaps names the resource in the errors the driver makes itself.
var configMaps = schema.GroupResource{Resource: "configmaps"}

// store writes o back: Create when it has no ConfigMap yet, Delete
// (preconditioned on its resourceVersion) when nothing is left in it,
// Update carrying its resourceVersion otherwise. A lost race is errRetry.
func (d *Driver) store(ctx context.Context, o *object) error {
	cm, err := o.encode(d.ns)
	if err != nil {
		return err
	}
	switch {
	case o.cm == nil:
		_, err = d.cms.Create(ctx, cm, metav1.CreateOptions{})
	case len(cm.Data) == 0 && len(cm.BinaryData) == 0:
		rv := o.cm.ResourceVersion
		err = d.cms.Delete(ctx, o.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if apierrors.IsNotFound(err) {
			err = apierrors.NewConflict(configMaps, o.name, err)
		}
	default:
		_, err = d.cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			// Deleted since it was read: the next attempt creates it.
			err = apierrors.NewConflict(configMaps, o.name, err)
		}
	}
	if lostRace(err) {
		return errRetry{err}
	}
	return classify(ctx, err, "writing ConfigMap "+d.ns+"/"+o.name)
}
