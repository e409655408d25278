package configmap_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// configMapsGVR is the resource the reactor guards.
var configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

// rvReactor gives the fake clientset the optimistic concurrency of a real
// API server, which the fake's object tracker lacks: every ConfigMap
// carries a resourceVersion that each write bumps; an Update or a
// preconditioned Delete carrying a stale one fails with Conflict, and a
// Create of an existing name with AlreadyExists. It serialises writes, as
// etcd does, and counts the races it reports.
type rvReactor struct {
	mu      sync.Mutex
	tracker k8stesting.ObjectTracker
	rv      int64
	// conflicts counts the Conflict and AlreadyExists errors returned.
	conflicts atomic.Int64
}

// newFake returns a fake clientset whose ConfigMap writes go through an
// rvReactor.
func newFake() (*fake.Clientset, *rvReactor) {
	cs := fake.NewClientset()
	r := &rvReactor{tracker: cs.Tracker()}
	cs.PrependReactor("create", "configmaps", r.create)
	cs.PrependReactor("update", "configmaps", r.update)
	cs.PrependReactor("delete", "configmaps", r.delete)
	return cs, r
}

// nextRV returns a fresh resourceVersion; r.mu is held.
func (r *rvReactor) nextRV() string {
	r.rv++
	return strconv.FormatInt(r.rv, 10)
}

// current returns the stored ConfigMap, or a NotFound error.
func (r *rvReactor) current(ns, name string) (*corev1.ConfigMap, error) {
	obj, err := r.tracker.Get(configMapsGVR, ns, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

func (r *rvReactor) create(action k8stesting.Action) (bool, runtime.Object, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cm := action.(k8stesting.CreateAction).GetObject().(*corev1.ConfigMap).DeepCopy()
	ns := action.GetNamespace()
	if _, err := r.current(ns, cm.Name); err == nil {
		r.conflicts.Add(1)
		return true, nil, apierrors.NewAlreadyExists(configMapsGVR.GroupResource(), cm.Name)
	}
	if cm.ResourceVersion != "" {
		return true, nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	cm.Namespace = ns
	cm.ResourceVersion = r.nextRV()
	if err := r.tracker.Create(configMapsGVR, cm, ns); err != nil {
		return true, nil, err
	}
	stored, err := r.current(ns, cm.Name)
	return true, stored, err
}

func (r *rvReactor) update(action k8stesting.Action) (bool, runtime.Object, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cm := action.(k8stesting.UpdateAction).GetObject().(*corev1.ConfigMap).DeepCopy()
	ns := action.GetNamespace()
	cur, err := r.current(ns, cm.Name)
	if err != nil {
		return true, nil, err
	}
	if cm.ResourceVersion != "" && cm.ResourceVersion != cur.ResourceVersion {
		r.conflicts.Add(1)
		return true, nil, apierrors.NewConflict(configMapsGVR.GroupResource(), cm.Name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	cm.Namespace = ns
	cm.ResourceVersion = r.nextRV()
	if err := r.tracker.Update(configMapsGVR, cm, ns); err != nil {
		return true, nil, err
	}
	stored, err := r.current(ns, cm.Name)
	return true, stored, err
}

func (r *rvReactor) delete(action k8stesting.Action) (bool, runtime.Object, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	del := action.(k8stesting.DeleteAction)
	ns := action.GetNamespace()
	cur, err := r.current(ns, del.GetName())
	if err != nil {
		return true, nil, err
	}
	if pre := del.GetDeleteOptions().Preconditions; pre != nil && pre.ResourceVersion != nil && *pre.ResourceVersion != cur.ResourceVersion {
		r.conflicts.Add(1)
		return true, nil, apierrors.NewConflict(configMapsGVR.GroupResource(), del.GetName(),
			fmt.Errorf("precondition failed: resourceVersion %s, stored %s", *pre.ResourceVersion, cur.ResourceVersion))
	}
	if err := r.tracker.Delete(configMapsGVR, ns, del.GetName()); err != nil {
		return true, nil, err
	}
	return true, nil, nil
}
