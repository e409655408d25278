package configmap_test

import (
	"sync"
	"testing"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/driver"
)

// TestConformance runs the conformance suite on the fake clientset and on
// the real API server, with the narrowings of the ConfigMap model
// declared (backendtest.PerAgent); doc.go lists which checks run and
// which skip, and why.
func TestConformance(t *testing.T) {
	t.Run("fake", func(t *testing.T) {
		backendtest.Run(t, conformance(func(t *testing.T) (typedcorev1.ConfigMapsGetter, string) {
			cs, _ := newFake()
			return cs.CoreV1(), "conformance"
		}))
	})
	t.Run("apiserver", func(t *testing.T) {
		cs := realServer(t)
		backendtest.Run(t, conformance(func(t *testing.T) (typedcorev1.ConfigMapsGetter, string) {
			return cs.CoreV1(), testNamespace(t, cs)
		}))
	})
}

// conformance returns the suite's configuration for drivers over the
// storage place returns: a client and a namespace of their own, empty.
func conformance(place func(t *testing.T) (typedcorev1.ConfigMapsGetter, string)) backendtest.Config {
	var mu sync.Mutex
	opened := map[driver.Driver]configmap.Options{}
	open := func(t *testing.T, opt configmap.Options) driver.Driver {
		d, err := configmap.New(opt)
		if err != nil {
			t.Fatalf("configmap.New: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		opened[d] = opt
		return d
	}
	return backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			client, ns := place(t)
			return open(t, configmap.Options{Client: client, Namespace: ns, Clock: clock})
		},
		Replica: func(t *testing.T, d driver.Driver) driver.Driver {
			mu.Lock()
			opt, ok := opened[d]
			mu.Unlock()
			if !ok {
				t.Fatalf("a replica of a driver the suite did not open")
			}
			return open(t, opt)
		},
		Sweeper:    true,
		TextSearch: backendtest.ExactTextSearch,
		PerAgent: &backendtest.PerAgent{
			Agent: func(d driver.Driver, name string) string {
				return configmap.AgentScheme + d.(*configmap.Driver).Namespace() + "/" + name
			},
			Fits: func(recs []memory.Record) bool {
				n, err := configmap.ObjectBytes(recs)
				return err == nil && n <= configmap.MaxObjectBytes
			},
			DimensionInRecords: true,
		},
	}
}
