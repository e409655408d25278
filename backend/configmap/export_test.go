package configmap

import "github.com/agentmem/memory"

// ObjectBytes returns the size, as a write measures it against
// MaxObjectBytes, of the ConfigMap that would hold exactly recs (records
// of one agent), so tests can tell whether they fit in one.
func ObjectBytes(recs []memory.Record) (int, error) {
	o := &object{name: ObjectPrefix + "size", recs: map[recordKey]memory.Record{}}
	if err := apply(o, recs); err != nil {
		return 0, err
	}
	cm, err := o.encode(DefaultNamespace)
	if err != nil {
		return 0, err
	}
	return size(cm)
}
