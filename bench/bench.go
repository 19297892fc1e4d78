// Package bench holds gorender's benchmarks: micro benchmarks (go test
// -bench ./bench) of body decoding, bundle load, the rewrite of react-dom's
// string accumulator and one render, and the side-by-side load benchmark
// against a Node reference server (bash bench/run.sh, driven by
// bench/cmd/benchctl). See bench/README.md.
//
// This file has what both share: where the fixtures are, and the large
// rendering request, generated deterministically.
package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// RepoRoot returns the repository root (the directory holding go.mod): this
// source file's parent when it is on disk, else the nearest directory with a
// go.mod above the working directory (a -trimpath build).
func RepoRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		root := filepath.Dir(filepath.Dir(file))
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root
		}
	}
	wd, _ := os.Getwd()
	for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
	}
	return wd
}

// Testdata returns the path of a file under tests/testdata.
func Testdata(rel string) string {
	return filepath.Join(RepoRoot(), "tests", "testdata", rel)
}

// ReadTestdata reads a file under tests/testdata.
func ReadTestdata(rel string) (string, error) {
	b, err := os.ReadFile(Testdata(rel))
	return string(b), err
}

// Workload is one rendering request of the benchmarks.
type Workload struct {
	Name string // hello, small, medium, large
	Desc string
	Code string
	// Page marks a page workload (ListPage): the load benchmark sends it
	// as distinct requests (Variants), in each body encoding.
	Page bool
}

// Workloads returns the four render workloads, in order: hello (transport
// and protocol cost), small (about 20 elements), medium (500 list items,
// about 175 KB of HTML) and large (6000 items, about 1.1 MB of props).
func Workloads() ([]Workload, error) {
	out := []Workload{
		{Name: "hello", Desc: "the string '<p>hello</p>' (transport and protocol cost)"},
		{Name: "small", Desc: "SmallPage, about 20 elements"},
		{Name: "medium", Desc: "ListPage, 500 items (~137 KB request, ~179 KB answer)", Page: true},
	}
	for i, file := range []string{"requests/hello.js", "requests/small-page.js", "requests/list-page.js"} {
		code, err := ReadTestdata(file)
		if err != nil {
			return nil, err
		}
		out[i].Code = code
	}
	large := LargeRequest()
	out = append(out, Workload{Name: "large", Desc: fmt.Sprintf("ListPage, %d items (%.2f MB request)", LargeItems, float64(len(large))/1e6), Code: large, Page: true})
	return out, nil
}

// LargeItems is the number of list items of the large request.
const LargeItems = 6000

// LargeRequest returns the large rendering request: ListPage with
// LargeItems items of English-like text (contractions, quotes, ampersands,
// a few non-ASCII characters), shaped and escaped like the Rails gem's
// requests (tests/testdata/js/requests.mjs). It is deterministic.
func LargeRequest() string {
	return listPageRequest(largeItems(LargeItems), "/items", "page=1&per=6000", 6)
}

type listItem struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// railsContext mirrors requests.mjs's railsContext, field for field.
type railsContext struct {
	ComponentRegistryTimeout int     `json:"componentRegistryTimeout"`
	RailsEnv                 string  `json:"railsEnv"`
	InMailer                 bool    `json:"inMailer"`
	I18nLocale               string  `json:"i18nLocale"`
	I18nDefaultLocale        string  `json:"i18nDefaultLocale"`
	RorVersion               string  `json:"rorVersion"`
	RorPro                   bool    `json:"rorPro"`
	RorProVersion            string  `json:"rorProVersion"`
	Href                     string  `json:"href"`
	Location                 string  `json:"location"`
	Scheme                   string  `json:"scheme"`
	Host                     string  `json:"host"`
	Port                     int     `json:"port"`
	Pathname                 string  `json:"pathname"`
	Search                   *string `json:"search"`
	HTTPAcceptLanguage       string  `json:"httpAcceptLanguage"`
	ServerSide               bool    `json:"serverSide"`
}

// railsJSON serialises like Rails' to_json: <, >, & and U+2028/9 escaped as
// \uXXXX (Go's encoder does exactly that), no trailing newline.
func railsJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func listPageRequest(items []listItem, path, search string, n int) string {
	location := path + "?" + search
	ctx := railsContext{
		ComponentRegistryTimeout: 5000, RailsEnv: "production", I18nLocale: "en", I18nDefaultLocale: "en",
		RorVersion: "16.6.0", RorPro: true, RorProVersion: "16.6.0",
		Href: "http://localhost:3000" + location, Location: location, Scheme: "http", Host: "localhost",
		Port: 3000, Pathname: path, Search: &search, HTTPAcceptLanguage: "en-US,en;q=0.9", ServerSide: true,
	}
	props := struct {
		Items []listItem `json:"items"`
	}{items}
	return `(function(componentName = "ListPage", props = undefined) {
  var railsContext = ` + railsJSON(ctx) + `;
  var usedProps = typeof props === 'undefined' ? ` + railsJSON(props) + ` : props;
  return ReactOnRails[ReactOnRails.isRSCBundle ? 'serverRenderRSCReactComponent' : 'serverRenderReactComponent']({
    name: componentName,
    domNodeId: "ListPage-react-component-5b0c6f7e-3a1d-4e2b-9c4f-` + fmt.Sprintf("%012d", 100+n) + `",
    props: usedProps,
    trace: false,
    railsContext: railsContext,
    throwJsErrors: false,
    renderingReturnsPromises: true,
  });
})()
`
}

// words of the large request's text: plain words, contractions and names
// with apostrophes, a few non-ASCII ones, as product reviews read.
var words = strings.Fields(`the a and of to in is it's that for on with as was but they're
you'll don't isn't can't we've O'Brien's shop's order arrived quickly box
quality price delivery customer support team product works great colour size
fits expected though battery lasts longer than last one I'd buy again would
recommend friends family café naïve déjà vu really pretty good not bad at all
kids love it wife's favourite husband's choice small large medium weekend
morning evening packaging recycled sturdy cheap expensive value money
instructions clear confusing setup took minutes hours returned replaced`)

// largeItems returns n items of deterministic text (32-bit LCG, fixed seed).
func largeItems(n int) []listItem {
	state := uint32(20260601)
	next := func() int {
		state = state*1664525 + 1013904223
		return int(state >> 8)
	}
	sentence := func(minChars int) string {
		var b strings.Builder
		for b.Len() < minChars {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			w := words[next()%len(words)]
			switch next() % 23 {
			case 0:
				w = `"` + w + `"`
			case 1:
				w += " &"
			case 2:
				w += ","
			}
			b.WriteString(w)
		}
		s := b.String()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	items := make([]listItem, n)
	for i := range items {
		items[i] = listItem{
			ID:    i + 1,
			Title: fmt.Sprintf("Review %d: %s", i+1, sentence(20)),
			Body:  sentence(90) + ". " + sentence(20) + "!",
		}
	}
	return items
}
