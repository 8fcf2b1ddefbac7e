package debuginfodtest

import (
	"context"
	"io"
	"os"

	"github.com/kdtrace/kdtrace/internal/debuginfod/transfer"
)

// InProcess is a debuginfod.Transfer that downloads in the test's own
// process, as kdtrace-debuginfod would, for tests of what uses the
// client rather than of how it runs the helper.
func InProcess(ctx context.Context, url string, body *os.File) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.CloseWithError(transfer.Run(ctx, url, body, w))
	}()
	return &inProcess{PipeReader: r, cancel: cancel, done: done}, nil
}

type inProcess struct {
	*io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

// Close ends the download and waits for it.
func (p *inProcess) Close() error {
	p.cancel()
	p.PipeReader.Close()
	<-p.done
	return nil
}
