package configmap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentmem/memory"
)

// ObjectPrefix starts the name of every ConfigMap the driver keeps: the
// document's agent-memory-<agent-name>.
const ObjectPrefix = "agent-memory-"

// Label is the label key the driver sets on every ConfigMap it keeps, with
// LabelValue (the layout version) as its value. Lists that do not name an
// agent select the namespace's ConfigMaps by it.
const (
	Label      = "agentmem.io/agent-memory"
	LabelValue = "v1"
)

// The suffixes of an entry's two keys: the readable line in Data, the
// record in BinaryData.
const (
	lineSuffix   = ".txt"
	recordSuffix = ".json"
)

// AgentName returns the agent-name part of an identity's Agent field: the
// text after the last '/' (kaos://agent/<namespace>/<name> gives <name>),
// or the whole value when it has no '/'.
func AgentName(agent string) string {
	if i := strings.LastIndexByte(agent, '/'); i >= 0 {
		return agent[i+1:]
	}
	return agent
}

// ObjectName returns the name of the ConfigMap that keeps the records of
// agent: ObjectPrefix followed by AgentName(agent). It fails with
// memory.ErrIncompleteScope for an empty agent and memory.ErrInvalidArgument
// when the name is not a valid Kubernetes object name (a DNS-1123
// subdomain: at most 253 lower-case letters, digits, '-' and '.').
func ObjectName(agent string) (string, error) {
	if agent == "" {
		return "", memory.Errorf(memory.ErrIncompleteScope, "the configmap driver keeps records per agent, and the identity has no agent")
	}
	name := ObjectPrefix + AgentName(agent)
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", memory.Errorf(memory.ErrInvalidArgument, "agent %q gives ConfigMap name %q, which Kubernetes refuses: %s", agent, name, strings.Join(errs, "; "))
	}
	return name, nil
}

// entryStem returns the key stem of a record: its creation time as 20
// decimal digits that sort in time order (unix nanoseconds with the sign
// bit flipped, so times before 1970 sort first too), '-', and 32 hex
// digits of the SHA-256 of its id. Keys sort oldest first.
func entryStem(r memory.Record) (string, error) {
	n, ok := memory.UnixNanos(r.Created)
	if !ok {
		return "", memory.Errorf(memory.ErrInvalidArgument, "record %s has a time outside the years 1678 to 2262", r.ID)
	}
	sum := sha256.Sum256([]byte(r.ID))
	stem := fmt.Sprintf("%020d-%s", uint64(n)^(1<<63), hex.EncodeToString(sum[:16]))
	for _, k := range []string{stem + lineSuffix, stem + recordSuffix} {
		if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
			return "", memory.Errorf(memory.ErrInvalidArgument, "record %s gives ConfigMap key %q, which Kubernetes refuses: %s", r.ID, k, strings.Join(errs, "; "))
		}
	}
	return stem, nil
}

// checkNamespace validates a namespace name (a DNS-1123 label).
func checkNamespace(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "namespace %q is not a valid Kubernetes namespace: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}
