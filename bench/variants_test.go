package bench

import (
	"testing"
)

// TestVariants checks the distinct requests of the page workloads: every
// variant differs from every other, has the request's length, and renders
// the answer VariantAnswer predicts from the request's own answer (Node's
// golden for medium), so the load generator can check every answer it gets.
func TestVariants(t *testing.T) {
	ws, err := Workloads()
	if err != nil {
		t.Fatal(err)
	}
	rt := loadedRuntime(t, newEngine(t, quickJS), bundle(t))
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			vs, err := Variants(w.Code, DefaultVariants)
			if w.Name == "hello" || w.Name == "small" {
				if w.Name == "hello" && err == nil {
					t.Fatalf("hello has no props, but Variants made %d variants of it", len(vs))
				}
				return // not a page workload: it repeats one request
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != DefaultVariants {
				t.Fatalf("%d variants, want %d", len(vs), DefaultVariants)
			}
			seen := map[string]int{}
			for i, v := range vs {
				if len(v) != len(w.Code) {
					t.Fatalf("variant %d has %d bytes, the request %d", i, len(v), len(w.Code))
				}
				if v == w.Code {
					t.Fatalf("variant %d is the request itself", i)
				}
				if j, ok := seen[v]; ok {
					t.Fatalf("variants %d and %d are the same", j, i)
				}
				seen[v] = i
			}
			var base string
			if w.Name == "medium" {
				if base, err = ReadTestdata("golden/list-page.html"); err != nil {
					t.Fatal(err)
				}
			} else {
				base = render(t, rt, w.Code)
			}
			answers := map[string]int{}
			for i := range vs {
				want, err := VariantAnswer(w.Code, base, i)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) != len(base) || want == base {
					t.Fatalf("variant %d's answer: %d bytes (the request's %d), same as the request's: %v", i, len(want), len(base), want == base)
				}
				if j, ok := answers[want]; ok {
					t.Fatalf("variants %d and %d have the same answer", j, i)
				}
				answers[want] = i
				if i == 0 || i == 17 || i == len(vs)-1 {
					if got := render(t, rt, vs[i]); got != want {
						t.Fatalf("variant %d renders %d bytes, not the predicted answer (%d bytes)", i, len(got), len(want))
					}
				}
			}
		})
	}
}
