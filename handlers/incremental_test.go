package handlers

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// TestReadUpdatesLeavesTheStopDeadline: when the update reader reaches its
// next line after the handler stopped it (stopped set, the read deadline
// moved to now), it returns without leaving its own, later deadline on the
// connection. Otherwise an aborted HTTP/1.1 answer stays open: net/http
// drains the request body before it closes the connection, and reads the
// lines the client keeps sending until that deadline (the line timeout:
// 20 s, 300 s in pull mode). TestIncrementalNeverYields saw that under
// load; here the order is forced. Fails on main before this (the read
// waits for the hour-long deadline and the bound below fails it).
func TestReadUpdatesLeavesTheStopDeadline(t *testing.T) {
	read := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			t.Errorf("full duplex: %v", err)
		}
		lines := newLineReader(r.Body, 1<<10)
		if _, err := lines.next(); err != nil {
			t.Errorf("line 1: %v", err)
		}
		// The handler stops the reader (stopReading) before it is back at
		// its loop's top.
		var state updateReading
		state.stop(rc)
		(&Handlers{}).readUpdates(r.Context(), rc, lines, time.Hour, &state, nil, nil, nil, nil)
		_, err := r.Body.Read(make([]byte, 1))
		read <- err
	}))
	defer srv.Close()

	body, send := io.Pipe()
	defer send.Close()
	go func() {
		resp, err := srv.Client().Post(srv.URL, MediaTypeNDJSON, body)
		if err == nil {
			resp.Body.Close()
		}
	}()
	if _, err := send.Write([]byte("{}\n")); err != nil { // line 1; the body stays open
		t.Fatal(err)
	}
	select {
	case err := <-read:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the body read after the reader stopped: %v, want the deadline exceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a body read after the reader stopped still waited 10 s: the reader left its own deadline")
	}
}
