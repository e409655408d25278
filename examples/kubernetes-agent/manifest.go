package main

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/agentmem/memory/tiers/agentspec"
)

// builtinAgent is agent.yaml as it was when the program was built: the
// manifest used when no -agent flag is given and
// examples/kubernetes-agent/agent.yaml is not under the working directory.
//
//go:embed agent.yaml
var builtinAgent []byte

// defaultAgentPath is where the example's manifest lives, relative to the
// repository root.
const defaultAgentPath = "examples/kubernetes-agent/agent.yaml"

// agent is the part of an Agent manifest this program reads.
type agent struct {
	// Source says where the manifest came from, for the output.
	Source    string
	Name      string
	Namespace string
	// SystemPrompt is spec.systemPrompt.
	SystemPrompt string
	// Tools are spec.tools.
	Tools []agentTool
	// Memory is spec.memory.
	Memory agentspec.Spec
}

// agentTool is one entry of spec.tools.
type agentTool struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// hasTool reports whether spec.tools names the tool.
func (a agent) hasTool(name string) bool {
	for _, t := range a.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// loadAgent reads the Agent manifest at path; an empty path means
// examples/kubernetes-agent/agent.yaml under the working directory when it
// exists, else the built-in copy.
func loadAgent(path string) (agent, error) {
	var data []byte
	source := path
	switch {
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return agent{}, err
		}
		data = b
	default:
		b, err := os.ReadFile(defaultAgentPath)
		switch {
		case err == nil:
			data, source = b, defaultAgentPath
		case errors.Is(err, os.ErrNotExist):
			data, source = builtinAgent, "agent.yaml (built into the program)"
		default:
			return agent{}, err
		}
	}
	a, err := parseAgent(data)
	if err != nil {
		return agent{}, fmt.Errorf("%s: %w", source, err)
	}
	a.Source = source
	return a, nil
}

// parseAgent decodes an Agent manifest: kind Agent in the purko.io API
// group, with a name, and a valid spec.memory (agentspec.ParseManifest).
func parseAgent(data []byte) (agent, error) {
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			SystemPrompt string      `json:"systemPrompt"`
			Tools        []agentTool `json:"tools"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return agent{}, fmt.Errorf("not a valid Agent manifest: %w", err)
	}
	if m.Kind != "Agent" || !strings.HasPrefix(m.APIVersion, "purko.io/") {
		return agent{}, fmt.Errorf("want kind Agent, apiVersion purko.io/v1alpha1; got kind %q, apiVersion %q", m.Kind, m.APIVersion)
	}
	if m.Metadata.Name == "" {
		return agent{}, errors.New("metadata.name is empty")
	}
	spec, err := agentspec.ParseManifest(data)
	if err != nil {
		return agent{}, err
	}
	return agent{
		Name:         m.Metadata.Name,
		Namespace:    m.Metadata.Namespace,
		SystemPrompt: strings.TrimSpace(m.Spec.SystemPrompt),
		Tools:        m.Spec.Tools,
		Memory:       spec,
	}, nil
}
