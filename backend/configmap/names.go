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

// AgentScheme starts an agent id of the URI form,
// kaos://agent/<namespace>/<name>.
const AgentScheme = "kaos://agent/"

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

// ParseAgent splits an identity's Agent field into the agent's namespace
// and name. Two forms are accepted:
//
//   - kaos://agent/<namespace>/<name>, the KAOS agent URI: namespace is a
//     DNS-1123 label (a Kubernetes namespace name) and name is the name of
//     the Agent object;
//   - <name> alone, an agent of the namespace the driver serves; namespace
//     comes back empty.
//
// In both, ObjectPrefix+name must be a valid ConfigMap name (a DNS-1123
// subdomain of at most 253 characters: lower-case letters, digits, '-'
// and '.'). Anything else — another scheme, a path of more or fewer than
// two segments, "..", upper case — is memory.ErrInvalidArgument, so that
// no two agents' ids can name one object; an empty agent is
// memory.ErrIncompleteScope.
func ParseAgent(agent string) (namespace, name string, err error) {
	if agent == "" {
		return "", "", memory.Errorf(memory.ErrIncompleteScope, "the configmap driver keeps records per agent, and the identity has no agent")
	}
	name = agent
	if rest, ok := strings.CutPrefix(agent, AgentScheme); ok {
		ns, n, ok := strings.Cut(rest, "/")
		if !ok || strings.Contains(n, "/") {
			return "", "", memory.Errorf(memory.ErrInvalidArgument, "agent %q is not of the form %s<namespace>/<name>", agent, AgentScheme)
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return "", "", memory.Errorf(memory.ErrInvalidArgument, "agent %q names namespace %q, which is not a Kubernetes namespace name: %s", agent, ns, strings.Join(errs, "; "))
		}
		namespace, name = ns, n
	} else if strings.ContainsAny(agent, ":/") {
		return "", "", memory.Errorf(memory.ErrInvalidArgument, "agent %q is neither %s<namespace>/<name> nor a plain agent name", agent, AgentScheme)
	}
	if name == "" {
		return "", "", memory.Errorf(memory.ErrInvalidArgument, "agent %q has an empty name", agent)
	}
	if errs := validation.IsDNS1123Subdomain(ObjectPrefix + name); len(errs) > 0 {
		return "", "", memory.Errorf(memory.ErrInvalidArgument, "agent %q gives ConfigMap name %q, which Kubernetes refuses: %s", agent, ObjectPrefix+name, strings.Join(errs, "; "))
	}
	return namespace, name, nil
}

// ObjectName returns the name of the ConfigMap that keeps the records of
// agent, ObjectPrefix followed by the agent's name (see ParseAgent). An
// agent of another namespace than the driver's is
// memory.ErrPermissionDenied: its memory belongs in its own namespace, which
// this driver does not serve (and, in a cluster, is not granted).
func (d *Driver) ObjectName(agent string) (string, error) {
	ns, name, err := ParseAgent(agent)
	if err != nil {
		return "", err
	}
	if ns != "" && ns != d.ns {
		return "", memory.Errorf(memory.ErrPermissionDenied, "agent %q belongs to namespace %s, and this configmap driver serves namespace %s only", agent, ns, d.ns)
	}
	return ObjectPrefix + name, nil
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
	sum := sha256.Sum256([]byte(r.Identity.Tenant + "\x00" + r.ID)) // ids are unique per tenant; tenants hold no NUL
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
