package configmap

import (
	"context"
	"errors"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agentmem/memory"
)

// selector selects the ConfigMaps the driver keeps.
const selector = Label + "=" + LabelValue

// load reads one ConfigMap by name; a missing one is an empty object
// without a ConfigMap.
func (d *Driver) load(ctx context.Context, name string) (*object, error) {
	cm, err := d.cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &object{name: name, recs: map[recordKey]memory.Record{}}, nil
	}
	if err != nil {
		return nil, classify(ctx, err, "reading ConfigMap "+d.ns+"/"+name)
	}
	return d.decode(cm)
}

// listPage is how many ConfigMaps one List call asks for; each may be up
// to MaxObjectBytes.
const listPage = 64

// loadAll reads every ConfigMap the driver keeps in its namespace: List
// calls selecting them by Label, listPage objects at a time.
func (d *Driver) loadAll(ctx context.Context) ([]*object, error) {
	var out []*object
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPage}
	for {
		list, err := d.cms.List(ctx, opts)
		if err != nil {
			return nil, classify(ctx, err, "listing the ConfigMaps of namespace "+d.ns)
		}
		for i := range list.Items {
			o, err := d.decode(&list.Items[i])
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
		if list.Continue == "" {
			d.forgetOthers(out)
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// decoded is one ConfigMap's records as the driver decoded them, and the
// version of the ConfigMap they are of.
type decoded struct {
	uid  types.UID
	rv   string
	recs map[recordKey]memory.Record
}

// decode returns the records of cm: decoded afresh, or taken from the
// driver's cache when it decoded this very version of cm before. Every
// write changes a ConfigMap's resourceVersion, so a cached version is
// never stale; the cache spares every Put and every query over all agents
// the decoding of each record of the namespace. The object returned is
// the caller's to change: its map is a copy, and callers replace or drop
// records rather than change them (List detaches what it returns).
func (d *Driver) decode(cm *corev1.ConfigMap) (*object, error) {
	if cm.ResourceVersion != "" {
		d.mu.Lock()
		c, ok := d.cache[cm.Name]
		d.mu.Unlock()
		if ok && c.uid == cm.UID && c.rv == cm.ResourceVersion {
			return &object{name: cm.Name, cm: cm, recs: maps.Clone(c.recs)}, nil
		}
	}
	o, err := decode(cm)
	if err != nil || cm.ResourceVersion == "" {
		return o, err
	}
	d.mu.Lock()
	d.cache[cm.Name] = decoded{uid: cm.UID, rv: cm.ResourceVersion, recs: maps.Clone(o.recs)}
	d.mu.Unlock()
	return o, nil
}

// forgetOthers drops from the cache every ConfigMap a complete listing
// (all) no longer shows.
func (d *Driver) forgetOthers(all []*object) {
	seen := make(map[string]bool, len(all))
	for _, o := range all {
		seen[o.name] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for name := range d.cache {
		if !seen[name] {
			delete(d.cache, name)
		}
	}
}

// scope returns the objects a query with filter f must read: the one
// ConfigMap of the agent f names, or, when f does not match on agent,
// every ConfigMap the driver keeps. An agent ParseAgent refuses has no
// records, so it yields no object; an agent of another namespace is
// memory.ErrPermissionDenied, as it is for Put, before anything is read.
func (d *Driver) scope(ctx context.Context, f memory.Filter) ([]*object, error) {
	if !f.Match.Has(memory.FieldAgent) {
		return d.loadAll(ctx)
	}
	name, err := d.ObjectName(f.Identity.Agent)
	if errors.Is(err, memory.ErrPermissionDenied) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	o, err := d.load(ctx, name)
	if err != nil {
		return nil, err
	}
	return []*object{o}, nil
}
