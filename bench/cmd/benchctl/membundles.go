package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// cellBundles measures a server holding several bundles at once: n copies
// of the bundle (distinct ids, so each is loaded on its own), uploaded
// through the gem's 410 flow, each sent the workload for warmup/n (at least
// 1 s) in a warm-up pass, then the workload sent to each copy in turn
// (duration/n each) while the process tree's RSS is sampled. The warm-up
// pass has every worker evaluate every copy before any copy is measured:
// the Node reference evaluates a copy in a worker on that worker's first
// request of it, which fell in that copy's own warm-up, while gorender's
// node engine evaluates an uploaded copy in its other processes in the
// background, which fell in the first copy's measured window. With W
// workers and n bundles the Node reference holds W × n contexts in W
// processes, as the node engine does; goja and quickjs hold W runtimes per
// bundle. The row's req/s is over the whole window, its
// p50 and p99 the worst copy's.
func cellBundles(c config, st setup, variant string, j *job, bundle string, workers, n, run int, answers *answerCheck) (result, error) {
	w := j.w
	res := result{Setup: st.name, Workload: fmt.Sprintf("mem%dx%d-%s", workers, n, w.Name), Encoding: j.enc, Mode: "repeated", Proto: "h2c", Variant: variant, Workers: workers, Run: run}
	s, err := startServer(c, st, variant, "h2c", workers, "")
	if err != nil {
		return res, err
	}
	defer s.stop()
	client := s.client("h2c")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.waitReady(ctx, client); err != nil {
		return res, err
	}
	ids := make([]string, n)
	for i := range n {
		copy := bundle + fmt.Sprintf("\n// bench copy %d\n", i)
		ids[i] = bundleID(copy)
		if err := uploadWith410(ctx, client, ids[i], copy, "'<p>hello</p>'\n"); err != nil {
			return res, err
		}
		probe, err := client.RenderRaw(ctx, gemclient.Render{BundleID: ids[i], Code: w.Code})
		if err != nil {
			return res, err
		}
		if probe.Status != 200 {
			return res, fmt.Errorf("probe render of copy %d: %d %.300s", i, probe.Status, probe.Body)
		}
		if note := answers.check(j.key, variant, probe.Body, j.golden); note != "" {
			res.Note = note
		}
	}
	rq := j.request(0)
	url := func(id string) string { return fmt.Sprintf("http://127.0.0.1:%d/bundles/%s/render/bench", s.port, id) }
	for _, id := range ids {
		if _, err := h2load(c, st.loadCPUs, st.conns, s.pid(), url(id), rq, 0, max(c.warmup/time.Duration(n), time.Second)); err != nil {
			return res, fmt.Errorf("warm-up pass: %w", err)
		}
	}
	sampler := startRSSSampler(s.pid())
	each := max(c.duration/time.Duration(n), time.Second)
	var total, cpu time.Duration
	for _, id := range ids {
		lr, err := h2load(c, st.loadCPUs, st.conns, s.pid(), url(id), rq, c.warmup/time.Duration(n), each)
		if err != nil {
			res.RSSMB = sampler.stop()
			return res, err
		}
		res.Requests += lr.requests
		cpu += lr.cpu
		res.Failed += lr.failed
		res.P50ms = max(res.P50ms, lr.p50)
		res.P99ms = max(res.P99ms, lr.p99)
		total += each
	}
	res.RSSMB = sampler.stop()
	res.RPS = float64(res.Requests) / total.Seconds()
	res.CPUms = cpuPerRequest(cpu, res.Requests)
	if res.Failed > 0 {
		res.Note = fmt.Sprintf("%s %d failed requests", res.Note, res.Failed)
	}
	return res, nil
}
