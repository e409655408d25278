// Package tokens counts tokens exactly with the cl100k_base encoding,
// offline: the encoding's ranks ship inside the tiktoken-go-loader module,
// so nothing is downloaded at run time.
package tokens

import (
	"context"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the name of the encoding Counter uses.
const Encoding = "cl100k_base"

// Counter counts cl100k_base tokens. The zero value is ready to use; the
// encoding is loaded once per process, on first use. It is safe for
// concurrent use.
type Counter struct{}

var (
	loadOnce sync.Once
	enc      *tiktoken.Tiktoken
	loadErr  error
)

func encoding() (*tiktoken.Tiktoken, error) {
	loadOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		enc, loadErr = tiktoken.GetEncoding(Encoding)
	})
	return enc, loadErr
}

// CountTokens returns the number of cl100k_base tokens in text, treating
// special-token text such as "<|endoftext|>" as ordinary text. It returns
// ctx's error when ctx has ended. It panics only if the embedded encoding
// cannot load, which is a build defect that Load reports at start-up.
func (Counter) CountTokens(ctx context.Context, text string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if text == "" {
		return 0, nil
	}
	e, err := encoding()
	if err != nil {
		panic("tokens: " + err.Error())
	}
	return len(e.EncodeOrdinary(text)), nil
}

// Load loads the encoding now rather than on first use and reports any
// error, so a program can fail at start-up instead of mid-turn.
func Load() error {
	_, err := encoding()
	return err
}
