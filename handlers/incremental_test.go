package handlers

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// readLine1 enables full duplex, as IncrementalRender does over HTTP/1.1,
// and reads line 1 of the body.
func readLine1(t *testing.T, w http.ResponseWriter, r *http.Request) (*http.ResponseController, *lineReader) {
	rc := http.NewResponseController(w)
	if err := rc.EnableFullDuplex(); err != nil {
		t.Errorf("full duplex: %v", err)
	}
	lines := newLineReader(r.Body, 1<<10)
	if _, err := lines.next(); err != nil {
		t.Errorf("line 1: %v", err)
	}
	return rc, lines
}

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
		rc, lines := readLine1(t, w, r)
		// The handler stops the reader (stopReading) before it is back at
		// its loop's top.
		var state updateReading
		state.stop(rc)
		(&Handlers{}).readUpdates(r.Context(), rc, lines, time.Hour, &state, nil, nil, nil, nil, nil)
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

// stoppedUpdatesServer serves POST as an incremental render whose answer
// has started (its header is out) when the handler stops the update
// reader with stopUpdates, as IncrementalRender does when its render ends;
// gate, if set, is the reader's atBodyEnd hook. GET answers "ok", or 500
// if its request started cancelled.
func stoppedUpdatesServer(t *testing.T, gate func(r *http.Request) (atEnd <-chan struct{}, hook func())) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if err := r.Context().Err(); err != nil {
				http.Error(w, "started cancelled: "+err.Error(), http.StatusInternalServerError)
				return
			}
			_, _ = io.WriteString(w, "ok")
			return
		}
		rc, lines := readLine1(t, w, r)
		_, _ = io.WriteString(w, "started\n")
		if err := rc.Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		var state updateReading
		var atEnd <-chan struct{}
		if gate != nil {
			atEnd, state.atBodyEnd = gate(r)
		}
		var reading sync.WaitGroup
		reading.Go(func() {
			(&Handlers{}).readUpdates(r.Context(), rc, lines, time.Hour, &state, nil, nil, jsvm.NewUpdates(), nil, func(error) {})
		})
		if atEnd != nil {
			<-atEnd
		}
		stopUpdates(w, r, rc, &state, &reading)
		_, _ = io.WriteString(w, "done\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestStopAtTheBodysEndClosesTheConnection: the handler stops the update
// reader in the instant between net/http reading the body's end, after
// which it reads ahead on the HTTP/1.1 connection for the next request,
// and the reader recording that end. The stop's deadline fails that read
// ahead, and net/http cancels the connection's context: the connection
// must not serve another request, which would start cancelled. The gate
// holds the reader at the body's end until that cancel. Fails before this
// (the GET reuses the connection: "500 started cancelled: context
// canceled").
func TestStopAtTheBodysEndClosesTheConnection(t *testing.T) {
	srv := stoppedUpdatesServer(t, func(r *http.Request) (<-chan struct{}, func()) {
		atEnd := make(chan struct{})
		return atEnd, func() {
			close(atEnd)
			<-r.Context().Done() // the stop failed net/http's read ahead
		}
	})
	client := srv.Client()
	defer client.CloseIdleConnections()
	resp, err := client.Post(srv.URL, MediaTypeNDJSON, strings.NewReader("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantStoppedAnswer(t, resp)
	var reused []bool
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
	}), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(got) != "ok" {
		t.Fatalf("the request after: %d %q, %v", resp.StatusCode, got, err)
	}
	if len(reused) == 0 || reused[len(reused)-1] {
		t.Errorf("the request after was served on the incremental render's connection (reused: %v)", reused)
	}
}

// wantStoppedAnswer reads and closes the answer of stoppedUpdatesServer's
// incremental render, which must be whole.
func wantStoppedAnswer(t *testing.T, resp *http.Response) {
	t.Helper()
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != "started\ndone\n" {
		t.Fatalf("the incremental answer: %q, %v", got, err)
	}
}

// TestStopBeforeTheBodysEndClosesTheConnection: the handler stops the
// update reader before the body's end; the client then sends the body's
// rest and another request on the connection. The rest must not be read
// as a request: the connection closes after the answer. Fails before this
// (the rest and the GET are answered "400 Bad Request").
func TestStopBeforeTheBodysEndClosesTheConnection(t *testing.T) {
	srv := stoppedUpdatesServer(t, nil)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Line 1 of a two-line body.
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: gorender\r\nContent-Type: "+MediaTypeNDJSON+"\r\nContent-Length: 6\r\n\r\n{}\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantStoppedAnswer(t, resp)
	// The body's rest, then another request. The writes may fail once
	// the server closed the connection.
	_, _ = io.WriteString(conn, "{}\nGET / HTTP/1.1\r\nHost: gorender\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err == nil {
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("the connection served another request after a half-read body: %d %q", resp.StatusCode, got)
	}
}
