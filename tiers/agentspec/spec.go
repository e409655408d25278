package agentspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers"
)

// MemoryType is spec.memory.type: which memory an agent has.
type MemoryType string

// The memory types of the document. TypeBuffer is the default.
const (
	// TypeBuffer is per-invocation memory, built as a *tiers.Buffer.
	TypeBuffer MemoryType = "buffer"
	// TypeSummary is one summary line per step, built as a *tiers.Summary.
	TypeSummary MemoryType = "summary"
	// TypeVector is timestamped entries in a directory, built as a
	// *tiers.Vector.
	TypeVector MemoryType = "vector"
	// TypeNone is explicitly stateless, built as a tiers.None.
	TypeNone MemoryType = "none"
)

// MemoryTypes lists the valid types, the default first.
var MemoryTypes = []MemoryType{TypeBuffer, TypeSummary, TypeVector, TypeNone}

// RetentionOldestFirst is the one retention policy: when maxEntries is
// reached, the oldest entries are dropped (the document's "oldest are
// dropped"). It is the default.
const RetentionOldestFirst = "oldest-first"

// RetentionPolicies lists the valid values of retentionPolicy.
var RetentionPolicies = []string{RetentionOldestFirst}

// Spec is the spec.memory block of an Agent, field for field as the
// document names them. The zero value is a buffer memory.
type Spec struct {
	// Type is buffer, summary, vector or none; empty means buffer.
	Type MemoryType `json:"type,omitempty"`
	// Backend is a storage backend hint, informational only.
	Backend string `json:"backend,omitempty"`
	// TTL is the time-to-live of entries: 1h, 24h, 7d (see
	// tiers.ParseTTL); empty means none.
	TTL string `json:"ttl,omitempty"`
	// MaxEntries is the most entries to retain, oldest dropped first;
	// zero means the type's default.
	MaxEntries int `json:"maxEntries,omitempty"`
	// MaxContextTokens is the token budget of the context injected at the
	// start of each step; zero means the type's default.
	MaxContextTokens int `json:"maxContextTokens,omitempty"`
	// RetentionPolicy is how entries are evicted when maxEntries is
	// reached; empty means RetentionOldestFirst.
	RetentionPolicy string `json:"retentionPolicy,omitempty"`
	// PersistentStorage mounts a PVC for vector memory.
	PersistentStorage PersistentStorage `json:"persistentStorage,omitzero"`
}

// PersistentStorage is spec.memory.persistentStorage.
type PersistentStorage struct {
	// Enabled mounts a PVC for vector memory.
	Enabled bool `json:"enabled,omitempty"`
	// VolumeClaimRef names the PVC, in the agent's namespace.
	VolumeClaimRef string `json:"volumeClaimRef,omitempty"`
}

// MaxSpecBytes is the largest spec.memory document Parse reads.
const MaxSpecBytes = 64 << 10

// Parse decodes a spec.memory block from YAML or JSON (JSON is YAML)
// and validates it (see Spec.Validate). Unknown fields are refused, naming
// the field, so a typo such as maxEntry does not pass silently, and so is
// input that is not valid UTF-8 (never repaired). The input is the block's
// own fields, as under `memory:` in an Agent; ParseManifest reads a whole
// Agent manifest.
func Parse(data []byte) (Spec, error) {
	if len(data) > MaxSpecBytes {
		return Spec{}, memory.Errorf(memory.ErrTooLarge, "spec.memory is %d bytes, the limit is %d", len(data), MaxSpecBytes)
	}
	if !utf8.Valid(data) {
		return Spec{}, memory.Errorf(memory.ErrInvalidArgument, "spec.memory is not valid UTF-8")
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		// JSON: decoded strictly, trailing data included.
		return parseSpecJSON(data)
	}
	js, err := yaml.YAMLToJSONStrict(data) // a key given twice is an error
	if err != nil {
		return Spec{}, memory.Wrap(memory.ErrInvalidArgument, err, "spec.memory is not valid YAML or JSON")
	}
	return parseSpecJSON(js)
}

// ParseManifest reads spec.memory from a whole Agent manifest in YAML or
// JSON (apiVersion, kind, metadata and the rest of spec are not checked
// here). An Agent without spec.memory has the default buffer memory. A
// manifest that is not valid UTF-8 is memory.ErrInvalidArgument.
func ParseManifest(manifest []byte) (Spec, error) {
	if len(manifest) > MaxManifestBytes {
		return Spec{}, memory.Errorf(memory.ErrTooLarge, "the Agent manifest is %d bytes, the limit is %d", len(manifest), MaxManifestBytes)
	}
	if !utf8.Valid(manifest) {
		return Spec{}, memory.Errorf(memory.ErrInvalidArgument, "the Agent manifest is not valid UTF-8")
	}
	js, err := yaml.YAMLToJSONStrict(manifest)
	if err != nil {
		return Spec{}, memory.Wrap(memory.ErrInvalidArgument, err, "the Agent manifest is not valid YAML or JSON")
	}
	var agent struct {
		Spec struct {
			Memory json.RawMessage `json:"memory"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(js, &agent); err != nil {
		return Spec{}, memory.Wrap(memory.ErrInvalidArgument, err, "the Agent manifest has no spec object")
	}
	if len(agent.Spec.Memory) == 0 || string(agent.Spec.Memory) == "null" {
		return Spec{}, nil
	}
	return parseSpecJSON(agent.Spec.Memory)
}

// MaxManifestBytes is the largest Agent manifest ParseManifest reads.
const MaxManifestBytes = 1 << 20

func parseSpecJSON(data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, specDecodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Spec{}, memory.Errorf(memory.ErrInvalidArgument, "spec.memory: unexpected data after the object")
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// specDecodeError turns a decoding error into a classified one that names
// the field at fault.
func specDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return memory.Wrap(memory.ErrInvalidArgument, err, fmt.Sprintf("spec.memory.%s must be %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value))
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return memory.Wrap(memory.ErrInvalidArgument, err, fmt.Sprintf("spec.memory has no field %q; the fields are type, backend, ttl, maxEntries, maxContextTokens, retentionPolicy, persistentStorage.enabled, persistentStorage.volumeClaimRef", field))
	}
	return memory.Wrap(memory.ErrInvalidArgument, err, "spec.memory is not a valid JSON object")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int":
		return "an integer"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	}
	return "an object"
}

// Validate checks every field, naming the field and its allowed values in
// the error (memory.ErrInvalidArgument).
func (s Spec) Validate() error {
	bad := func(field, format string, args ...any) error {
		return memory.Errorf(memory.ErrInvalidArgument, "spec.memory.%s: %s", field, fmt.Sprintf(format, args...))
	}
	if s.Type != "" && !validType(s.Type) {
		return bad("type", "%q is not a memory type; use one of %s", string(s.Type), typeList())
	}
	if !utf8.ValidString(s.Backend) {
		return bad("backend", "%q is not valid UTF-8", s.Backend)
	}
	if s.TTL != "" {
		if _, err := tiers.ParseTTL(s.TTL); err != nil {
			return bad("ttl", "%q is not a duration like 1h, 24h or 7d", s.TTL)
		}
	}
	if s.MaxEntries < 0 {
		return bad("maxEntries", "%d; it must be zero (the default) or positive", s.MaxEntries)
	}
	if s.MaxContextTokens < 0 {
		return bad("maxContextTokens", "%d; it must be zero (the default) or positive", s.MaxContextTokens)
	}
	if s.RetentionPolicy != "" && s.RetentionPolicy != RetentionOldestFirst {
		return bad("retentionPolicy", "%q is not a retention policy; use %q (the default)", s.RetentionPolicy, RetentionOldestFirst)
	}
	ps := s.PersistentStorage
	if ref := ps.VolumeClaimRef; ref != "" {
		// PVC names are DNS-1123 subdomains, as Kubernetes validates them.
		if msgs := validation.IsDNS1123Subdomain(ref); len(msgs) > 0 {
			return bad("persistentStorage.volumeClaimRef", "%q is not a valid PersistentVolumeClaim name: %s", ref, strings.Join(msgs, "; "))
		}
	}
	if ps.Enabled && ps.VolumeClaimRef == "" {
		return bad("persistentStorage.volumeClaimRef", "persistentStorage.enabled is true, so the PVC to mount must be named")
	}
	if (ps.Enabled || ps.VolumeClaimRef != "") && s.MemoryType() != TypeVector {
		return bad("persistentStorage", "a PVC is mounted for vector memory only, and type is %q", string(s.MemoryType()))
	}
	return nil
}

// MemoryType returns the spec's type, TypeBuffer when it is empty.
func (s Spec) MemoryType() MemoryType {
	if s.Type == "" {
		return TypeBuffer
	}
	return s.Type
}

// TTLDuration returns the parsed ttl, zero when it is empty. It assumes a
// validated Spec.
func (s Spec) TTLDuration() time.Duration {
	if s.TTL == "" {
		return 0
	}
	d, _ := tiers.ParseTTL(s.TTL)
	return d
}

func validType(t MemoryType) bool {
	for _, v := range MemoryTypes {
		if t == v {
			return true
		}
	}
	return false
}

func typeList() string {
	names := make([]string, len(MemoryTypes))
	for i, t := range MemoryTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
