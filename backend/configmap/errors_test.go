package configmap_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
)

// TestAPIErrors checks that API errors come back classified with the
// memory sentinels and still unwrap to the API's StatusError.
func TestAPIErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, c := range []struct {
		what string
		err  error
		want error
	}{
		{"Forbidden", apierrors.NewForbidden(gr, "agent-memory-monitor", errors.New("RBAC")), memory.ErrPermissionDenied},
		{"Unauthorized", apierrors.NewUnauthorized("token expired"), memory.ErrPermissionDenied},
		{"RequestEntityTooLarge", apierrors.NewRequestEntityTooLargeError("limit is 3145728"), memory.ErrTooLarge},
		{"BadRequest", apierrors.NewBadRequest("bad"), memory.ErrInvalidArgument},
		{"ServiceUnavailable", apierrors.NewServiceUnavailable("etcd down"), memory.ErrClosed},
		{"InternalError", apierrors.NewInternalError(errors.New("boom")), memory.ErrClosed},
	} {
		cs, _ := newFake()
		fail := func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, c.err }
		cs.PrependReactor("get", "configmaps", fail)
		cs.PrependReactor("list", "configmaps", fail)
		d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "ai-agents"})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, listErr := d.List(ctx, scoped(t, monitor, memory.LevelAgent))
		_, storeErr := d.List(ctx, scoped(t, monitor, memory.LevelSession))
		putErr := d.Put(ctx, []memory.Record{memory.NewSummary(monitor, "wf/s", "x", t0)})
		for what, err := range map[string]error{"List of one agent": listErr, "List of all agents": storeErr, "Put": putErr} {
			var se *apierrors.StatusError
			if !errors.Is(err, c.want) || !errors.As(err, &se) {
				t.Errorf("%s failing with %s: got %v, want %v wrapping the StatusError", what, c.what, err, c.want)
			}
		}
	}
}

// TestUnnameableAgentReads checks that a read naming an agent Kubernetes
// could not name an object after finds nothing, as nothing can be stored
// for it, rather than failing.
func TestUnnameableAgentReads(t *testing.T) {
	cs, _ := newFake()
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "ai-agents"})
	if err != nil {
		t.Fatal(err)
	}
	q := scoped(t, memory.Identity{Agent: "kaos://agent/ai-agents/Monitor_1"}, memory.LevelParentAgent)
	if got, err := d.List(context.Background(), q); err != nil || len(got) != 0 {
		t.Errorf("List: %q, %v", idsOf(got), err)
	}
	if n, err := d.Delete(context.Background(), q); err != nil || n != 0 {
		t.Errorf("Delete: %d, %v", n, err)
	}
}
