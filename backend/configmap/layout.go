package configmap

import (
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/agentmem/memory"
)

// stored is the machine-readable part of one entry, kept as JSON in
// BinaryData under "<stem>.json". Content is not repeated here: it is the
// entry's Data value under "<stem>.txt".
type stored struct {
	ID       string            `json:"id"`
	Kind     memory.Kind       `json:"kind"`
	Identity storedIdentity    `json:"identity"`
	Label    string            `json:"label,omitempty"`
	Key      string            `json:"key,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Created  int64             `json:"created"`
	Expires  *int64            `json:"expires,omitempty"`
	Tokens   int               `json:"tokens,omitempty"`
	Version  int64             `json:"version"`
	Vector   []float32         `json:"vector,omitempty"`
}

// storedIdentity is a record's identity in the JSON.
type storedIdentity struct {
	Tenant   string `json:"tenant,omitempty"`
	User     string `json:"user,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Instance string `json:"instance,omitempty"`
	Squad    string `json:"squad,omitempty"`
	Session  string `json:"session,omitempty"`
}

// object is one decoded ConfigMap: its records by tenant and id, and the
// ConfigMap itself (nil when it does not exist yet) for its
// resourceVersion and the keys the driver does not manage.
type object struct {
	name string
	cm   *corev1.ConfigMap
	recs map[recordKey]memory.Record
}

// recordKey is what a record is stored under: record ids are unique per
// tenant.
type recordKey struct{ tenant, id string }

// keyOf returns the key r is stored under.
func keyOf(r memory.Record) recordKey { return recordKey{r.Identity.Tenant, r.ID} }

// decode reads the records of cm. Keys the driver does not manage (a
// BinaryData key without the ".json" suffix, a Data key without a record
// beside it) are ignored here and kept by encode.
func decode(cm *corev1.ConfigMap) (*object, error) {
	o := &object{name: cm.Name, cm: cm, recs: make(map[recordKey]memory.Record, len(cm.BinaryData))}
	for k, raw := range cm.BinaryData {
		stem, ok := strings.CutSuffix(k, recordSuffix)
		if !ok {
			continue
		}
		var s stored
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, memory.Wrap(memory.ErrInvalidArgument, err, "ConfigMap "+cm.Name+" key "+k+" does not hold a record")
		}
		r := memory.Record{
			ID:   s.ID,
			Kind: s.Kind,
			Identity: memory.Identity{
				Tenant: s.Identity.Tenant, User: s.Identity.User, Agent: s.Identity.Agent,
				Instance: s.Identity.Instance, Squad: s.Identity.Squad, Session: s.Identity.Session,
			},
			Label:    s.Label,
			Key:      s.Key,
			Content:  cm.Data[stem+lineSuffix],
			Metadata: s.Metadata,
			Created:  time.Unix(0, s.Created).UTC(),
			Tokens:   s.Tokens,
			Version:  s.Version,
			Vector:   s.Vector,
		}
		if s.Expires != nil {
			r.Expires = time.Unix(0, *s.Expires).UTC()
		}
		o.recs[keyOf(r)] = r
	}
	return o, nil
}

// encode returns the ConfigMap holding o's records in namespace ns: the
// stored one with its managed keys replaced (its resourceVersion and
// unmanaged keys kept), or a new one carrying the driver's label.
func (o *object) encode(ns string) (*corev1.ConfigMap, error) {
	var cm *corev1.ConfigMap
	if o.cm != nil {
		cm = o.cm.DeepCopy()
	} else {
		cm = &corev1.ConfigMap{}
		cm.Name = o.name
		cm.Namespace = ns
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels[Label] = LabelValue
	data := make(map[string]string, len(o.recs))
	bin := make(map[string][]byte, len(o.recs))
	for k, v := range cm.BinaryData {
		if stem, ok := strings.CutSuffix(k, recordSuffix); !ok {
			bin[k] = v
		} else {
			delete(cm.Data, stem+lineSuffix)
		}
	}
	for k, v := range cm.Data {
		data[k] = v
	}
	for _, r := range o.recs {
		stem, err := entryStem(r)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(toStored(r))
		if err != nil {
			return nil, memory.Wrap(memory.ErrInvalidArgument, err, "record "+r.ID+" cannot be encoded")
		}
		data[stem+lineSuffix] = r.Content
		bin[stem+recordSuffix] = raw
	}
	cm.Data, cm.BinaryData = data, bin
	return cm, nil
}

// toStored returns the JSON form of r.
func toStored(r memory.Record) stored {
	s := stored{
		ID:   r.ID,
		Kind: r.Kind,
		Identity: storedIdentity{
			Tenant: r.Identity.Tenant, User: r.Identity.User, Agent: r.Identity.Agent,
			Instance: r.Identity.Instance, Squad: r.Identity.Squad, Session: r.Identity.Session,
		},
		Label:    r.Label,
		Key:      r.Key,
		Metadata: r.Metadata,
		Created:  r.Created.UnixNano(),
		Tokens:   r.Tokens,
		Version:  r.Version,
		Vector:   r.Vector,
	}
	if !r.Expires.IsZero() {
		n := r.Expires.UnixNano()
		s.Expires = &n
	}
	return s
}

// size returns the length of cm serialized as JSON, the measure the
// driver holds against MaxObjectBytes.
func size(cm *corev1.ConfigMap) (int, error) {
	raw, err := json.Marshal(cm)
	if err != nil {
		return 0, memory.Wrap(memory.ErrInvalidArgument, err, "ConfigMap "+cm.Name+" cannot be encoded")
	}
	return len(raw), nil
}
