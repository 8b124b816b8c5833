package snapshot

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
	"time"
)

// The read-ahead gives its source's bytes in order, whatever the sizes
// of the source's reads and of its reader's, then the source's own error.
func TestReadAhead(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 9, aheadSize - 1, aheadSize, aheadSize + 1, 3*aheadSize + 7, 11*aheadSize + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		for name, src := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return bytes.NewReader(data) },
			"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
			"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		} {
			if name == "one byte" && size > aheadSize+1 {
				continue
			}
			a := readAhead(src())
			if err := iotest.TestReader(a, data); err != nil {
				t.Errorf("%d bytes, %s source: %v", size, name, err)
			}
			a.Close()
		}
	}

	// A source that breaks: what it gave, then its error as it is (a
	// truncated gzip stream's io.ErrUnexpectedEOF is not an end).
	data := bytes.Repeat([]byte("0123456789"), aheadSize/5)
	a := readAhead(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(io.ErrUnexpectedEOF)))
	got, err := io.ReadAll(a)
	if !bytes.Equal(got, data) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a broken source: %d of %d bytes, %v", len(got), len(data), err)
	}
	a.Close()
}

// Closed before its reader is done (the decoder stopped on damage, or the
// run was interrupted), the read-ahead's goroutine ends.
func TestReadAheadClose(t *testing.T) {
	a := readAhead(bytes.NewReader(make([]byte, 20*aheadSize)))
	var p [100]byte
	if _, err := a.Read(p[:]); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close() // twice: as Close(ins) may
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the read-ahead goroutine did not end after Close")
	}
}
