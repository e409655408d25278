// Package langchaingo adapts the tiered memory (package tiers/tiered) to
// langchaingo, so chains, agents and histories written for langchaingo use
// agentmem unchanged, on a *tiered.Memory in the process or on a client of
// the memory service alike: every adapter holds a tiered.Interface and the
// memory.Identity the host program verified for the session, never one taken
// from a model's or a tool's arguments.
//
//   - Memory is a langchaingo schema.Memory (what chains.NewConversation and
//     agent executors take): before a call it recalls the session's window,
//     digest and the facts relevant to the input, and hands them to the
//     prompt under the memory key; after it, it appends the input and the
//     output as two turns.
//   - ChatMessageHistory is a langchaingo schema.ChatMessageHistory over the
//     session's short-term window.
//   - SaveTool and SearchTool are the service document's save_memory and
//     search_memory tools (langchaingo tools.Tool): the first stores a fact
//     on purpose (tiered.Interface.Remember, attribution without a level),
//     the second searches long-term facts at a level no wider than the
//     agent's maximum read scope.
//
// The types satisfy langchaingo's interfaces by their method sets. This
// package imports langchaingo's llms package only; its tests, and the
// example program examples/langchaingo-agent, run the adapters under
// langchaingo's own chains and agents with its fake model:
// chains.NewConversation with chains.Run and chains.Call, agents.NewExecutor
// over the conversational and the one-shot agent with the memory tools, and
// langchaingo's ConversationBuffer memory over the chat history.
//
// Every adapter is safe for concurrent use as far as its tiered.Interface
// is; a *tiered.Memory is.
package langchaingo
