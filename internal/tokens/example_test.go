package tokens_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/tokens"
)

// The zero Counter counts cl100k_base tokens.
func ExampleCounter() {
	var c tokens.Counter
	n, err := c.CountTokens(context.Background(), "Hey Mel! Good to see you! How have you been?")
	fmt.Println(c.Name(), n, err)
	// Output: cl100k_base 13 <nil>
}

// New chooses an encoding by name; an unknown name is an invalid argument.
func ExampleNew() {
	c, err := tokens.New(tokens.O200kBase)
	if err != nil {
		panic(err)
	}
	n, _ := c.CountTokens(context.Background(), "お誕生日おめでとう")
	fmt.Println(c.Name(), n)

	_, err = tokens.New("gpt-4o")
	fmt.Println(errors.Is(err, memory.ErrInvalidArgument))
	// Output:
	// o200k_base 8
	// true
}

// Load parses the encodings at start-up, so that the first count of a
// turn does not pay for it and a broken build fails early.
func ExampleLoad() {
	if err := tokens.Load(tokens.Cl100kBase, tokens.O200kBase); err != nil {
		panic(err)
	}
	fmt.Println(tokens.Names())
	// Output: [cl100k_base o200k_base]
}

// A count stops with the context's error, unchanged, once it ends.
func ExampleCounter_CountTokens_cancelled() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tokens.Counter{}.CountTokens(ctx, "a long text")
	fmt.Println(err == context.Canceled)
	// Output: true
}
