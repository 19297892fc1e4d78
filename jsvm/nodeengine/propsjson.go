package nodeengine

import (
	"sync"
	"unsafe"
)

// propsRewrite appends to dst a rendering request as a process compiles it
// and returns the offsets of its JSON.parse calls (header.Parsed), or dst
// and no offsets to send it as it came. The rewrite of large JSON literals
// into JSON.parse of the same text (transform.AppendPropsAsJSON) is off on
// this engine: measured end to end with distinct requests, it saves nothing
// on the medium page and costs the large one about 17% more CPU (its
// process spends more on the parsed props than V8 saves on the compile):
// docs/decisions/node-props-as-json.md. The executor gives the request back
// as sent in renderingRequest when it is on; the tests and benchmarks render
// both ways through this variable.
var propsRewrite = sentAsIs

// sentAsIs is propsRewrite with nothing rewritten.
func sentAsIs(dst []byte, code string) ([]byte, []int) { return dst, nil }

// rewriteBuffers holds the buffers a request is written into before it
// goes down a pipe when it is not sent as it came: one per render in
// flight at most, and none kept past maxKeptRewrite bytes.
var rewriteBuffers sync.Pool

const maxKeptRewrite = 4 << 20

func getBuffer() *[]byte {
	if bp, _ := rewriteBuffers.Get().(*[]byte); bp != nil {
		return bp
	}
	return new([]byte)
}

func putBuffer(bp *[]byte, b []byte) {
	if cap(b) <= maxKeptRewrite {
		*bp = b[:0]
		rewriteBuffers.Put(bp)
	}
}

// compiledCode is code as it goes down the pipe: rewritten (propsRewrite,
// with its JSON.parse calls' offsets; nil: not rewritten), and in Latin-1
// (latin1) when every character of it is at most U+00FF, which Node
// decodes in a fraction of the time of UTF-8 with non-ASCII characters
// (latin1.go). done gives back the buffers the text is in once it went
// down the pipe (the text must not be used after).
func compiledCode(code string) (text string, parsed []int, latin1 bool, done func()) {
	var held []func()
	done = func() {
		for _, f := range held {
			f()
		}
	}
	text = code
	bp := getBuffer()
	out, parsed := propsRewrite((*bp)[:0], code)
	if parsed != nil {
		text = unsafe.String(unsafe.SliceData(out), len(out))
		held = append(held, func() { putBuffer(bp, out) })
	} else {
		putBuffer(bp, out)
	}
	lp := getBuffer()
	l1, latin1, converted := appendLatin1((*lp)[:0], text)
	if converted {
		text = unsafe.String(unsafe.SliceData(l1), len(l1))
		held = append(held, func() { putBuffer(lp, l1) })
	} else {
		putBuffer(lp, l1)
	}
	return text, parsed, latin1, done
}
