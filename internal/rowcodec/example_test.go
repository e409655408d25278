package rowcodec_test

import (
	"fmt"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/varint"
)

func Example() {
	data := rowcodec.Append(nil, &rowcodec.Fields{ID: "turn-1", Kind: memory.KindTurn, Created: 1e9, Speaker: "Caroline"})
	r := varint.Reader{B: data, Fail: func(format string, args ...any) error { return fmt.Errorf(format, args...) }}
	var d rowcodec.Decoder
	var f rowcodec.Fields
	if err := d.Read(&r, &f); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.ID, f.Kind, f.Speaker, f.Created, len(data), "bytes")
	// Output: turn-1 turn Caroline 1000000000 29 bytes
}
