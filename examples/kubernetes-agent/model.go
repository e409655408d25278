package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/vectortool"
)

// maxModelCalls bounds one step's model calls, tool rounds included.
const maxModelCalls = 4

// runStep is the step's ReAct loop: call the model; run the tool calls it
// asks for and hand back their results; stop at its first answer without
// tool calls. search is nil when no tool is offered.
func runStep(ctx context.Context, model llms.Model, system, task string, search *vectortool.Tool, out io.Writer) (string, error) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, system),
		llms.TextParts(llms.ChatMessageTypeHuman, task),
	}
	var opts []llms.CallOption
	if search != nil {
		opts = append(opts, llms.WithTools([]llms.Tool{vectortool.LLMTool()}))
	}
	for range maxModelCalls {
		resp, err := model.GenerateContent(ctx, msgs, opts...)
		if err != nil {
			return "", err
		}
		if len(resp.Choices) == 0 {
			return "", errors.New("the model returned no choice")
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			return choice.Content, nil
		}
		asked := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		for _, call := range choice.ToolCalls {
			asked.Parts = append(asked.Parts, call)
		}
		msgs = append(msgs, asked)
		for _, call := range choice.ToolCalls {
			name, args := "", ""
			if call.FunctionCall != nil {
				name, args = call.FunctionCall.Name, call.FunctionCall.Arguments
			}
			result, err := callTool(ctx, search, name, args)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(out, "\nTool call: %s %s\n%s\n\n", name, args, indent(result))
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: call.ID, Name: name, Content: result},
			}})
		}
	}
	return "", fmt.Errorf("the model gave no answer in %d calls", maxModelCalls)
}

// callTool runs one tool call. A call the model got wrong (a tool that is
// not offered, arguments vector-search cannot use) goes back to the model
// as the result, so it can correct its call; an error is a real failure
// (a done context, closed memory, storage), which ends the step.
func callTool(ctx context.Context, search *vectortool.Tool, name, args string) (string, error) {
	if search == nil || name != vectortool.Name {
		return fmt.Sprintf("error: there is no tool %q", name), nil
	}
	return search.Call(ctx, args)
}

// scriptedModel stands in for a real model so the example needs no API
// key and its output is deterministic. It reads its input as a real model
// would: offered vector-search, it searches for the task first; then it
// answers from the recalled block in its system prompt, calling the task
// recurring when an earlier run had the same task, and cites the best
// search match.
type scriptedModel struct{}

// GenerateContent answers as described above.
func (scriptedModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	var system, task, searched string
	var didSearch bool
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				switch m.Role {
				case llms.ChatMessageTypeSystem:
					system += p.Text
				case llms.ChatMessageTypeHuman:
					task = p.Text
				}
			case llms.ToolCallResponse:
				didSearch, searched = true, p.Content
			}
		}
	}
	offered := false
	for _, t := range o.Tools {
		offered = offered || (t.Function != nil && t.Function.Name == vectortool.Name)
	}
	if offered && !didSearch {
		args, err := json.Marshal(struct {
			Query string `json:"query"`
			K     int    `json:"k"`
		}{keywords(task), 3})
		if err != nil {
			return nil, err
		}
		call := llms.ToolCall{ID: "call-1", Type: "function", FunctionCall: &llms.FunctionCall{Name: vectortool.Name, Arguments: string(args)}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, nil
	}

	earlier, same := earlierRuns(system, task)
	var answer string
	switch {
	case earlier == 0:
		answer = "New: no earlier run in memory covers this, so it is a first occurrence. Opened an incident."
	case same > 0:
		answer = fmt.Sprintf("Recurring: %d of the %d earlier run(s) in memory had the same task. Linked to the open incident instead of opening a new one.", same, earlier)
	default:
		answer = fmt.Sprintf("New: none of the %d earlier run(s) in memory had this task, so it is a first occurrence. Opened an incident.", earlier)
	}
	if didSearch {
		answer += " " + citation(searched)
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: answer}}}, nil
}

// Call is llms.Model's single-prompt form.
func (m scriptedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// earlierRuns counts the lines of the recalled block in system, and those
// among them whose task is task.
func earlierRuns(system, task string) (earlier, same int) {
	start := strings.Index(system, tiers.ContextHeader)
	end := strings.Index(system, tiers.ContextFooter)
	if start < 0 || end < start {
		return 0, 0
	}
	want := "] Task: " + strings.Join(strings.Fields(task), " ") + " | Result: "
	for _, line := range strings.Split(system[start+len(tiers.ContextHeader):end], "\n") {
		if strings.HasPrefix(line, "[") {
			earlier++
			if strings.Contains(line, want) {
				same++
			}
		}
	}
	return earlier, same
}

// stopWords are left out of the model's search query.
var stopWords = map[string]bool{"a": true, "an": true, "and": true, "are": true, "for": true, "in": true,
	"is": true, "it": true, "new": true, "of": true, "on": true, "or": true, "the": true, "to": true, "was": true}

// keywords is the search query the model makes of a task: its words,
// without punctuation and stop words.
func keywords(task string) string {
	var words []string
	for _, w := range strings.Fields(task) {
		w = strings.Trim(w, ".,;:!?()[]{}\"'")
		if w != "" && !stopWords[strings.ToLower(w)] {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return task
	}
	return strings.Join(words, " ")
}

// citation names the best vector-search match, the first "entry <name>"
// line of the tool's result.
func citation(result string) string {
	for _, line := range strings.Split(result, "\n") {
		if name, ok := strings.CutPrefix(line, "entry "); ok {
			name, _, _ = strings.Cut(name, " ")
			return "Source: memory entry " + name + "."
		}
	}
	if strings.HasPrefix(result, "error: ") {
		return "vector-search failed: " + strings.TrimPrefix(result, "error: ")
	}
	return "vector-search found no matching entry."
}
