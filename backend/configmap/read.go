package configmap

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agentmem/memory"
)

// selector selects the ConfigMaps the driver keeps.
const selector = Label + "=" + LabelValue

// load reads one ConfigMap by name; a missing one is an empty object
// without a ConfigMap.
func (d *Driver) load(ctx context.Context, name string) (*object, error) {
	cm, err := d.cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &object{name: name, recs: map[string]memory.Record{}}, nil
	}
	if err != nil {
		return nil, classify(ctx, err, "reading ConfigMap "+d.ns+"/"+name)
	}
	return decode(cm)
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
			o, err := decode(&list.Items[i])
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// scope returns the objects a query with filter f must read: the one
// ConfigMap of the agent f names, or, when f does not match on agent,
// every ConfigMap the driver keeps. An agent whose object name Kubernetes
// would refuse has no records, so it yields no object.
func (d *Driver) scope(ctx context.Context, f memory.Filter) ([]*object, error) {
	if !f.Match.Has(memory.FieldAgent) {
		return d.loadAll(ctx)
	}
	name, err := ObjectName(f.Identity.Agent)
	if err != nil {
		return nil, nil
	}
	o, err := d.load(ctx, name)
	if err != nil {
		return nil, err
	}
	return []*object{o}, nil
}
