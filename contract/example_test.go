package contract_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
)

// A server answers an error with its class's status and body; a client
// reads the body back into an error that matches the same sentinel.
func Example() {
	err := memory.Errorf(memory.ErrIncompleteScope, "level session needs identity session")
	wire := contract.NewError(err)
	body, _ := json.Marshal(contract.ErrorBody{Error: wire})
	fmt.Println(wire.Class.Status(), string(body))

	var got contract.ErrorBody
	_ = json.Unmarshal(body, &got)
	fmt.Println(errors.Is(&got.Error, memory.ErrIncompleteScope))
	// Output:
	// 400 {"error":{"class":"incomplete_scope","message":"memory: incomplete scope: level session needs identity session"}}
	// true
}
