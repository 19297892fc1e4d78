package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// ---- Servers ----------------------------------------------------------------

type server struct {
	variant string
	port    int
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	log     *os.File
}

// variantEnv is what each server variant adds to the environment; every
// one of them is sent the bundle as built.
var variantEnv = map[string][]string{
	"node":          nil,
	"gorender":      nil,
	"gorender-norw": {"RENDERER_REWRITE_STRING_BUILDS=false"},
	"quickjs":       {"RENDERER_JS_ENGINE=quickjs"},
	"gorender-node": {"RENDERER_JS_ENGINE=node"},
}

// freePort returns a loopback port nothing listens on now. A fixed port
// range let two benchctl runs on one machine measure each other's servers:
// a server that cannot bind exits, but the other run's answered /health.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer starts a server of variant on st's server CPUs.
func startServer(c config, st setup, variant, proto string, workers int, cache string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{variant: variant, port: port, done: make(chan struct{})}
	if cache == "" {
		cache = filepath.Join(c.outDir, "cache-"+strings.ReplaceAll(variant, "+", "-"))
	}
	var args, env []string
	env = append(os.Environ(), "RENDERER_PORT="+strconv.Itoa(s.port), "RENDERER_HOST=127.0.0.1",
		"RENDERER_PASSWORD="+password, "RENDERER_SERVER_BUNDLE_CACHE_PATH="+cache,
		"RENDERER_WORKERS_COUNT="+strconv.Itoa(workers))
	if variant == "node" {
		args = []string{"node", filepath.Join(c.nodeDir, "server.mjs")}
		env = append(env, "RENDERER_PROTOCOL="+proto)
	} else {
		args = []string{c.gorenderBin}
		// GOMAXPROCS is gorender's own default: the CPUs it may run on,
		// at least 2.
		env = append(env, "RENDERER_LOG_LEVEL=warn",
			"RENDERER_RENDER_TIMEOUT=120s", "RENDERER_QUEUE_TIMEOUT=120s")
		env = append(env, variantEnv[variant]...)
		env = append(env, c.gorenderEnv...)
	}
	logf, err := os.OpenFile(filepath.Join(c.outDir, "server-"+strings.ReplaceAll(variant, "+", "-")+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	s.log = logf
	s.cmd = pinned(st.serverCPUs, args...)
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.started = time.Now()
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	liveMu.Lock()
	live[s] = true
	liveMu.Unlock()
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) client(proto string) *gemclient.Client {
	return &gemclient.Client{BaseURL: fmt.Sprintf("http://127.0.0.1:%d", s.port), Password: password,
		GemVersion: "17.0.0", RailsEnv: "production", HTTP: gemclient.NewHTTPClient(proto == "h2c")}
}

// waitReady polls /health until the server answers.
func (s *server) waitReady(ctx context.Context, client *gemclient.Client) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client.BaseURL+"/health", nil)
		if resp, err := client.HTTP.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("%s exited: see %s", s.variant, s.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// stop ends the server's process group (the server, and Node's workers).
func (s *server) stop() {
	liveMu.Lock()
	if !live[s] {
		liveMu.Unlock()
		return
	}
	delete(live, s)
	liveMu.Unlock()
	defer s.log.Close()
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// coldStart times process start → first successful render, through the
// gem's flow (410, then the render with the bundle attached), on an empty
// cache, over h2c.
func coldStart(c config, st setup, variant, bundle, code string) (coldResult, error) {
	cache, err := os.MkdirTemp(c.outDir, "cold-")
	if err != nil {
		return coldResult{}, err
	}
	defer os.RemoveAll(cache)
	s, err := startServer(c, st, variant, "h2c", st.workers, cache)
	if err != nil {
		return coldResult{}, err
	}
	defer s.stop()
	client := s.client("h2c")
	client.HTTP.Timeout = 2 * time.Minute
	id := bundleID(bundle)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var listen time.Duration
	for {
		r, err := client.RenderRaw(ctx, gemclient.Render{BundleID: id, Code: code})
		if err == nil {
			listen = time.Since(s.started)
			if r.Status != 410 {
				return coldResult{}, fmt.Errorf("first render: %d, want 410", r.Status)
			}
			break
		}
		select {
		case <-s.done:
			return coldResult{}, fmt.Errorf("server exited: see %s", s.log.Name())
		case <-ctx.Done():
			return coldResult{}, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	r, err := client.RenderMultipart(ctx, gemclient.Render{BundleID: id, Code: code, Bundles: map[string][]byte{id: []byte(bundle)}})
	if err != nil {
		return coldResult{}, err
	}
	total := time.Since(s.started)
	if r.Status != 200 {
		return coldResult{}, fmt.Errorf("render with the bundle: %d %.300s", r.Status, r.Body)
	}
	return coldResult{Variant: variant, Ms: ms(total), Listen: ms(listen), RSSMB: treeRSS(s.pid())}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
