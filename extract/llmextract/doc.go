// Package llmextract implements extract.Extractor and extract.Summarizer
// over any langchaingo llms.Model (OpenAI, Anthropic, Ollama, Google AI,
// Bedrock and the rest): the service document's "summarization" model,
// which "drives extraction and digest generation".
//
// Each call is one GenerateContent request: a system prompt (FactPrompt
// or DigestPrompt, this package's own wording) and a user message that
// holds the input as JSON, so that text in the turns cannot pass for the
// prompt's structure. The reply is read by extract.ParseFacts or
// extract.ParseDigest, tolerant of fences, prose and truncation; what
// cannot be read is an error wrapping extract.ErrMalformedOutput, and
// nothing of it is returned. A model that fails is memory.ErrUnavailable,
// wrapping the provider's error so that errors.As still finds it; a
// context that ends first gives its error unchanged.
//
// The model and everything about it (name, temperature, JSON mode, keys)
// is the caller's: New takes a model made elsewhere, and Options.CallOptions
// go with every request. The package imports langchaingo's llms package
// and, of this module, memory and extract; package extract itself does
// not import langchaingo.
package llmextract
