package extract

import (
	"errors"
	"fmt"

	"github.com/agentmem/memory"
)

// ErrMalformedOutput is wrapped by every error that reports a model reply
// that cannot be used: no JSON of the expected shape, an empty digest,
// invalid UTF-8, a reply over MaxReplyBytes. Such an error is also of
// kind memory.ErrInvalidArgument (memory.ErrTooLarge for a reply over
// the size limit), so both errors.Is(err, ErrMalformedOutput) and
// errors.Is(err, memory.ErrInvalidArgument) hold. The distinction from
// bad input matters to a caller that retries: the same turns may well
// get a usable reply from the model on a second call, while input that
// fails CheckExtract never succeeds.
var ErrMalformedOutput = errors.New("extract: malformed model output")

// Malformed returns an error of kind memory.ErrInvalidArgument that wraps
// ErrMalformedOutput, with a formatted message that says what was wrong
// with the reply. Implementations of Extractor and Summarizer use it for
// replies they cannot use.
func Malformed(format string, args ...any) error {
	return &memory.Error{Kind: memory.ErrInvalidArgument, Msg: fmt.Sprintf(format, args...), Err: ErrMalformedOutput}
}

// tooLargeReply is the error for a reply over MaxReplyBytes.
func tooLargeReply(n int) error {
	return &memory.Error{
		Kind: memory.ErrTooLarge,
		Msg:  fmt.Sprintf("the model's reply is %d bytes, the limit is %d", n, MaxReplyBytes),
		Err:  ErrMalformedOutput,
	}
}
