package tests

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/gorender/gorender/gemclient"
)

// This file proves what h2c bodies that no handler reads can cost a client
// without the password: Go's HTTP/2 server buffers a request's DATA up to
// the connection's flow-control window (1 MiB) before a handler reads it.

// h2cAttacker is one raw h2c connection of a client without the password.
type h2cAttacker struct {
	conn  net.Conn
	fr    *http2.Framer
	block bytes.Buffer // enc writes here; enc and dec keep the connection's HPACK tables
	enc   *hpack.Encoder
	dec   *hpack.Decoder
}

// dialH2C opens a connection, sends the client preface with
// SETTINGS_INITIAL_WINDOW_SIZE window (0: the server may send no answer
// bytes, so that an answer stays unsent while the client keeps its stream
// open), and reads the server's SETTINGS.
func dialH2C(t *testing.T, s *server, window uint32) (*h2cAttacker, error) {
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		return nil, err
	}
	a := &h2cAttacker{conn: conn, fr: http2.NewFramer(conn, conn), dec: hpack.NewDecoder(4096, nil)}
	a.enc = hpack.NewEncoder(&a.block)
	if err := a.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}); err != nil {
		return nil, err
	}
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			return nil, fmt.Errorf("server preface: %w", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			return a, a.fr.WriteSettingsAck()
		}
	}
}

// request opens stream id with method and path; body, when not nil, is the
// whole body, else the body is left open.
func (a *h2cAttacker) request(id uint32, method, path string, header map[string]string, body []byte) error {
	a.block.Reset()
	fields := []hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: "127.0.0.1"}, {Name: ":path", Value: path}}
	for k, v := range header {
		fields = append(fields, hpack.HeaderField{Name: k, Value: v})
	}
	for _, f := range fields {
		if err := a.enc.WriteField(f); err != nil {
			return err
		}
	}
	if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: a.block.Bytes(), EndHeaders: true}); err != nil || body == nil {
		return err
	}
	return a.fr.WriteData(id, true, body)
}

// awaitAnswer reads frames until the answer's HEADERS on stream id: the
// handler has decided its answer and stopped reading the body.
func (a *h2cAttacker) awaitAnswer(id uint32) (status string, err error) {
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			return "", fmt.Errorf("waiting for the answer: %w", err)
		}
		if f.Header().StreamID != id && f.Header().StreamID != 0 {
			continue
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			fields, err := a.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				return "", err
			}
			for _, hf := range fields {
				if hf.Name == ":status" {
					return hf.Value, nil
				}
			}
		case *http2.RSTStreamFrame:
			return "", fmt.Errorf("stream reset (%v) before an answer", f.ErrCode)
		case *http2.GoAwayFrame:
			return "", fmt.Errorf("GOAWAY (%v) before an answer", f.ErrCode)
		}
	}
}

// readBody reads stream id's answer body to its end.
func (a *h2cAttacker) readBody(id uint32) (string, error) {
	var body strings.Builder
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			return body.String(), fmt.Errorf("reading the answer: %w", err)
		}
		switch f := f.(type) {
		case *http2.DataFrame:
			if f.StreamID != id {
				continue
			}
			body.Write(f.Data())
			if f.StreamEnded() {
				return body.String(), nil
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return body.String(), fmt.Errorf("stream reset (%v)", f.ErrCode)
			}
		case *http2.GoAwayFrame:
			return body.String(), fmt.Errorf("GOAWAY (%v)", f.ErrCode)
		}
	}
}

// sendWindow sends n body bytes on stream 1, in 16 KiB frames, then a PING,
// and waits for its ACK: the server's connection goroutine handles frames
// in order, so by then it has taken every byte (buffered or dropped).
func (a *h2cAttacker) sendWindow(n int) error {
	chunk := make([]byte, 16<<10)
	for sent := 0; sent < n; sent += len(chunk) {
		if err := a.fr.WriteData(1, false, chunk[:min(len(chunk), n-sent)]); err != nil {
			return err
		}
	}
	if err := a.fr.WritePing(false, [8]byte{'h', '3'}); err != nil {
		return err
	}
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("waiting for the PING ACK: %w", err)
		}
		switch f := f.(type) {
		case *http2.PingFrame:
			if f.IsAck() {
				return nil
			}
		case *http2.GoAwayFrame:
			return fmt.Errorf("GOAWAY (%v) while sending", f.ErrCode)
		}
	}
}

// TestH2CUnreadBodiesNotHeld: a client without the password opens 400 h2c
// connections, each with one request that is answered without its body
// being read (a probe, a scrape, a 404, a 401 from the Authorization
// header), keeps each answer unsent with a zero window and then sends the
// 1 MiB the connection's flow-control window allows. gorender drops those
// bytes: its Go heap grows by far less than 1 MiB per connection. On main
// before this the bytes were buffered until the write timeout, 400 MiB of
// heap.
func TestH2CUnreadBodiesNotHeld(t *testing.T) {
	t.Parallel()
	const conns = 100
	const window = 1 << 20
	s := startLimitedServer(t, []string{"--as=" + strconv.Itoa(3<<30)}, map[string]string{
		"RENDERER_MAX_CONNECTIONS": "1000", "RENDERER_WRITE_TIMEOUT": "5m",
	})
	targets := []struct {
		method, path string
		header       map[string]string
		status       string
	}{
		{"GET", "/health", nil, "200"},
		{"GET", "/metrics", nil, "200"},
		{"POST", "/nothing-here", nil, "404"},
		{"POST", "/bundles/x/render/d", map[string]string{"content-type": gemclient.RawJSContentType,
			"authorization": "Bearer wrong", "x-react-on-rails-pro-protocol-version": "2.0.0"}, "401"},
	}
	for _, target := range targets {
		before := s.metricValue(t, "go_memstats_heap_inuse_bytes")
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := dialH2C(t, s, 0)
				if err == nil {
					err = a.request(1, target.method, target.path, target.header, nil)
				}
				var status string
				if err == nil {
					status, err = a.awaitAnswer(1)
				}
				if err == nil && status != target.status {
					err = fmt.Errorf("status %s, want %s", status, target.status)
				}
				if err == nil {
					err = a.sendWindow(window - 64<<10)
				}
				if err != nil {
					errs <- fmt.Errorf("%s %s, connection %d: %w", target.method, target.path, i, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		grew := s.metricValue(t, "go_memstats_heap_inuse_bytes") - before
		t.Logf("%s %s: the Go heap grew by %.0f MiB with %d connections holding unread bodies (%.0f KiB each)",
			target.method, target.path, grew/(1<<20), conns, grew/conns/1024)
		if limit := float64(conns * window / 4); grew > limit {
			t.Errorf("%s %s: the Go heap grew by %.0f MiB with %d connections of unread bodies, want at most %.0f MiB: bodies nobody reads are buffered",
				target.method, target.path, grew/(1<<20), conns, limit/(1<<20))
		}
	}
	if out := s.stderr.String(); strings.Contains(out, "out of memory") {
		t.Errorf("gorender ran out of memory:\n%s", tail(out, 2000))
	}
}

// TestUnauthenticatedConnectionCap: at most
// RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS connections that never
// authenticated are open: 100 h2c connections of a client without the
// password leave 40 open, the oldest closed for the newest, while an h2c
// connection that authenticated before them keeps rendering. Each such
// connection may buffer 1 MiB of body, so their number bounds the memory
// clients without the password can cost (docs/limits.md "What a client without the password can cost").
func TestUnauthenticatedConnectionCap(t *testing.T) {
	t.Parallel()
	const capped, attackers = 40, 100
	s := startServer(t, map[string]string{"RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS": strconv.Itoa(capped)})
	id := newID("u")
	s.upload(t, map[string]string{id: markerBundle("authenticated")}, nil)
	renderOn := func(rails *h2cAttacker, stream uint32) {
		t.Helper()
		header := map[string]string{"content-type": gemclient.RawJSContentType,
			"authorization": "Bearer " + testPassword, "x-react-on-rails-pro-protocol-version": "2.0.0"}
		err := rails.request(stream, "POST", "/bundles/"+id+"/render/d", header, []byte("MARKER"))
		var status, body string
		if err == nil {
			status, err = rails.awaitAnswer(stream)
		}
		if err == nil {
			body, err = rails.readBody(stream)
		}
		if err != nil || status != "200" || body != "authenticated" {
			t.Fatalf("render on the authenticated connection, stream %d: status %q, body %q, err %v", stream, status, body, err)
		}
	}
	rails, err := dialH2C(t, s, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	renderOn(rails, 1)
	for i := range attackers {
		// Each returns once the server accepted the connection and sent
		// its SETTINGS, so the eviction for it has happened.
		if _, err := dialH2C(t, s, 0); err != nil {
			t.Fatalf("attacker %d: %v", i, err)
		}
	}
	_ = rails.conn.SetDeadline(time.Now().Add(requestTimeout))
	renderOn(rails, 3)
	body := s.get(t, transports[1], "GET", "/metrics").Body
	// Open: the authenticated h2c and upload connections, and at most the
	// cap of others (the attackers and the scrape's own connection).
	if open := metricIn(body, "gorender_connections_open"); open > capped+2 {
		t.Errorf("gorender_connections_open = %v with %d attacking connections, want at most %d", open, attackers, capped+2)
	}
	if open := metricIn(body, "gorender_connections_unauthenticated"); open > capped || open < capped/2 {
		t.Errorf("gorender_connections_unauthenticated = %v with %d attacking connections, want at most the cap of %d (and most of them the attackers)", open, attackers, capped)
	}
	if evicted := metricIn(body, `gorender_connections_shed_total{reason="evicted"}`); evicted < attackers-capped {
		t.Errorf("%v connections evicted, want at least %d", evicted, attackers-capped)
	}
}
