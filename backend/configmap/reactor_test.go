package configmap_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// alwaysConflict is a reactor that fails every write it sees with
// Conflict, as a ConfigMap that changes between every read and write would.
func alwaysConflict(action k8stesting.Action) (bool, runtime.Object, error) {
	return true, nil, apierrors.NewConflict(configMapsGVR.GroupResource(), "agent-memory-monitor", errAlwaysChanged)
}

// errAlwaysChanged is alwaysConflict's cause.
var errAlwaysChanged = apierrors.NewBadRequest("the object changed again")

// TestReactor checks the fake's optimistic concurrency itself: fresh
// resourceVersions on every write, Conflict for a stale Update or
// preconditioned Delete, AlreadyExists for a second Create.
func TestReactor(t *testing.T) {
	cs, r := newFake()
	cms := cs.CoreV1().ConfigMaps("ai-agents")
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "agent-memory-monitor"}, Data: map[string]string{"a": "1"}}
	created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil || created.ResourceVersion == "" {
		t.Fatalf("Create: %v, resourceVersion %q", err, created.GetResourceVersion())
	}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second Create: %v, want AlreadyExists", err)
	}
	got, err := cms.Get(ctx, "agent-memory-monitor", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("Get: %v, resourceVersion %q, want %q", err, got.GetResourceVersion(), created.ResourceVersion)
	}
	got.Data["b"] = "2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.ResourceVersion == created.ResourceVersion {
		t.Fatalf("Update with the current resourceVersion: %v, resourceVersion %q", err, updated.GetResourceVersion())
	}
	stale := created.DeepCopy()
	stale.Data["c"] = "3"
	if _, err := cms.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("Update with a stale resourceVersion: %v, want Conflict", err)
	}
	now, _ := cms.Get(ctx, "agent-memory-monitor", metav1.GetOptions{})
	if now.Data["c"] != "" || now.Data["b"] != "2" || now.ResourceVersion != updated.ResourceVersion {
		t.Errorf("after the stale Update: %v at %q", now.Data, now.ResourceVersion)
	}
	old := created.ResourceVersion
	err = cms.Delete(ctx, "agent-memory-monitor", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &old}})
	if !apierrors.IsConflict(err) {
		t.Errorf("Delete with a stale precondition: %v, want Conflict", err)
	}
	cur := updated.ResourceVersion
	if err := cms.Delete(ctx, "agent-memory-monitor", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &cur}}); err != nil {
		t.Errorf("Delete with the current precondition: %v", err)
	}
	if _, err := cms.Update(ctx, updated, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Update of a deleted ConfigMap: %v, want NotFound", err)
	}
	if n := r.conflicts.Load(); n != 3 {
		t.Errorf("the reactor counted %d races, want 3", n)
	}
}
